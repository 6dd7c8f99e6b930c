package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// RunRequest is the body of POST /v1/run: a script to run on the node.
type RunRequest struct {
	// ID names the run for POST /v1/stop; the caller picks it.
	ID string `json:"id,omitempty"`
	// Program is the script's text.
	Program string `json:"program"`
	// Args are the script's positional parameters ($1, $2, ...).
	Args []string `json:"args,omitempty"`
	// Deadline ends the run after that many seconds; 0 for MaxDeadline.
	Deadline float64 `json:"deadline_seconds,omitempty"`
	// Unsafe allows unsafe builtins such as system(); it needs the
	// right VerbTraceUnsafe.
	Unsafe bool `json:"unsafe,omitempty"`
	// PodUID keeps only the tasks of the pod of that UID on the node,
	// by its cgroup, and sets $container_pid, as gtrace --pod does.
	PodUID string `json:"pod_uid,omitempty"`
	// ContainerID, with PodUID, keeps only that container of the pod.
	ContainerID string `json:"container_id,omitempty"`
}

// StopRequest is the body of POST /v1/stop: it ends the run ID of the
// same user as the script's exit() would, and its maps still come.
type StopRequest struct {
	ID string `json:"id"`
}

// Message is one line of JSON in the answer of /v1/run.
type Message struct {
	// Type is "line" for a line the script printed, "stderr" for a line
	// of gtrace's diagnostics, "map" for a map at the end of the run
	// (Map in mapmerge's wire format) and "end" last, with Exit.
	Type string          `json:"type"`
	Text string          `json:"text,omitempty"`
	Map  json.RawMessage `json:"map,omitempty"`
	Exit *int            `json:"exit,omitempty"`
}

// Runner runs req until ctx ends or the script exits, printing to out,
// and returns the exit code.
type Runner func(ctx context.Context, req *RunRequest, out *Stream) int

// MaxDeadline bounds a run, and is the deadline of a request without one.
const MaxDeadline = time.Hour

// Server is the agent's HTTP API.
type Server struct {
	Auth *Authorizer
	Run  Runner
	// Metrics, if set, answers /metrics without a token, as Prometheus
	// scrapes it.
	Metrics http.Handler

	// one lets one script run at a time: the runtime handles signals
	// for the whole process.
	one  sync.Mutex
	mu   sync.Mutex
	runs map[string]*activeRun
	// early holds the stops that came before their run, which a client
	// sends when Ctrl-C comes as its run request is on its way: the run
	// ends as soon as it starts. By run ID, with the user and the time.
	early map[string]earlyStop
}

type earlyStop struct {
	user string
	at   time.Time
}

// earlyStopTTL is how long a stop waits for its run.
const earlyStopTTL = time.Minute

type activeRun struct {
	user string
	stop context.CancelFunc
}

// Handler returns the agent's routes: /readyz, /metrics, and the
// authorized /v1/run and /v1/stop.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	if s.Metrics != nil {
		mux.Handle("GET /metrics", s.Metrics)
	}
	mux.Handle("POST /v1/run", s.Auth.Handler(http.HandlerFunc(s.serveRun)))
	mux.Handle("POST /v1/stop", s.Auth.Handler(http.HandlerFunc(s.serveStop)))
	return mux
}

func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "gtrace agent: bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Program == "" {
		http.Error(w, "gtrace agent: bad request: no program", http.StatusBadRequest)
		return
	}
	if req.ContainerID != "" && req.PodUID == "" {
		http.Error(w, "gtrace agent: bad request: a container_id without its pod_uid", http.StatusBadRequest)
		return
	}
	if req.Deadline < 0 {
		http.Error(w, "gtrace agent: bad request: negative deadline", http.StatusBadRequest)
		return
	}
	if req.Unsafe && !s.Auth.AllowUnsafe(w, r) {
		return
	}
	deadline := MaxDeadline
	if d := time.Duration(req.Deadline * float64(time.Second)); d > 0 && d < deadline {
		deadline = d
	}
	ctx, cancel := context.WithTimeout(r.Context(), deadline)
	defer cancel()
	user, _ := UserOf(r.Context())
	if req.ID != "" {
		s.mu.Lock()
		if s.runs == nil {
			s.runs = map[string]*activeRun{}
		}
		if s.runs[req.ID] != nil {
			s.mu.Unlock()
			http.Error(w, "gtrace agent: a run "+req.ID+" is already running", http.StatusConflict)
			return
		}
		s.runs[req.ID] = &activeRun{user: user.Username, stop: cancel}
		if e, ok := s.early[req.ID]; ok && e.user == user.Username {
			delete(s.early, req.ID)
			cancel()
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.runs, req.ID)
			s.mu.Unlock()
		}()
	}

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	out := newStream(w)
	s.one.Lock()
	code := 1
	// A caller that left while the run waited for its turn wants none;
	// a run stopped or past its deadline still runs BEGIN and END, and
	// prints its maps.
	if r.Context().Err() == nil {
		code = s.Run(ctx, &req, out)
	}
	s.one.Unlock()
	out.end(code)
}

func (s *Server) serveStop(w http.ResponseWriter, r *http.Request) {
	var req StopRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		http.Error(w, "gtrace agent: bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.ID == "" {
		http.Error(w, "gtrace agent: bad request: no id", http.StatusBadRequest)
		return
	}
	user, _ := UserOf(r.Context())
	s.mu.Lock()
	run := s.runs[req.ID]
	// Another user's run is as good as missing.
	if run == nil || run.user != user.Username {
		now := time.Now()
		for id, e := range s.early {
			if now.Sub(e.at) > earlyStopTTL {
				delete(s.early, id)
			}
		}
		if s.early == nil {
			s.early = map[string]earlyStop{}
		}
		s.early[req.ID] = earlyStop{user: user.Username, at: now}
		s.mu.Unlock()
		fmt.Fprintln(w, "no such run yet: it stops as it starts")
		return
	}
	s.mu.Unlock()
	run.stop()
	fmt.Fprintln(w, "stopping")
}

package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gtrace/runtime"
)

// Listen listens on addr, HOST:PORT as net.Listen takes it: an IP
// address ([IPv6]:PORT), a host name, or an empty host for every
// address. Port 0 picks a free port, which the listener's Addr tells.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		// net's "listen tcp" names the address only when it resolved;
		// say which one was asked for, always.
		var opErr *net.OpError
		if errors.As(err, &opErr) {
			err = opErr.Err
		}
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// Server answers GET /metrics with the exposition of a running script's
// maps, with net/http: the binary has it anyway, for the web view and
// the cluster mode's HTTPS (docs/design.md, "serve and /metrics").
type Server struct {
	exporter *Exporter
	read     atomic.Pointer[func() (*runtime.Snapshot, error)]
	http     *http.Server
}

// Timeouts of a scrape. A scrape reads every map, so the answer may take
// a while to make; Prometheus itself gives up after 10 s by default.
const (
	readHeaderTimeout = 10 * time.Second
	writeTimeout      = 30 * time.Second
	// idleTimeout keeps a scraper's connection open from one scrape
	// to the next at the usual intervals (Prometheus' default is 1 m).
	idleTimeout = 2 * time.Minute
	// shutdownTimeout bounds the wait for scrapes still being answered
	// when the script ends: they answer 503 at once by then.
	shutdownTimeout = 2 * time.Second
)

// NewServer returns a server of exporter's expositions. Until SetReader
// is called, and once the reader says tracing has ended, /metrics
// answers 503 Service Unavailable.
func NewServer(exporter *Exporter) *Server {
	s := &Server{exporter: exporter}
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readHeaderTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	return s
}

// SetReader sets the function that reads a snapshot of the maps:
// runtime.Options.Snapshots hands it over once the probes are attached.
func (s *Server) SetReader(read func() (*runtime.Snapshot, error)) {
	s.read.Store(&read)
}

// Serve answers the connections l accepts until Shutdown, and then
// returns http.ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	return s.http.Serve(l)
}

// Shutdown stops listening, waits up to shutdownTimeout for the scrapes
// being answered, and closes every connection.
func (s *Server) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		s.http.Close()
	}
}

// ServeHTTP answers a request: the exposition for GET or HEAD of
// /metrics, in the format the Accept header prefers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.Error(w, "gtrace serves /metrics", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "/metrics answers GET", http.StatusMethodNotAllowed)
		return
	}
	read := s.read.Load()
	if read == nil {
		http.Error(w, "the probes are not attached yet", http.StatusServiceUnavailable)
		return
	}
	snap, err := (*read)()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	format := Negotiate(r.Header.Get("Accept"))
	// Written whole before the answer starts, so that a failure is a
	// 500 rather than a cut exposition.
	var b bytes.Buffer
	if err := s.exporter.Write(&b, snap, format); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", format.ContentType())
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.Write(b.Bytes())
}

// Negotiate picks the format an Accept header prefers: OpenMetrics
// where it ranks application/openmetrics-text above text/plain (by q,
// then by order), the classic text format otherwise, as for a missing
// header or */*.
func Negotiate(accept string) Format {
	best, bestQ := Text, 0.0
	for _, item := range strings.Split(accept, ",") {
		params := strings.Split(item, ";")
		q := 1.0
		for _, p := range params[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
		}
		var format Format
		switch strings.ToLower(strings.TrimSpace(params[0])) {
		case "application/openmetrics-text":
			format = OpenMetrics
		case "text/plain":
			format = Text
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = format, q
		}
	}
	return best
}

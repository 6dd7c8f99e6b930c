package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gtrace/runtime"
)

// Server answers GET /metrics with the exposition of a running script's
// maps. It speaks just enough HTTP/1.1 for a scraper, one request per
// connection, on sockets of its own (listen.go): net/http would add a
// megabyte to the resident memory of every gtrace run, serving or not,
// and even the net package makes the binary, which every run loads,
// larger (docs/design.md, "serve and /metrics").
type Server struct {
	exporter *Exporter
	read     atomic.Pointer[func() (*runtime.Snapshot, error)]
}

// NewServer returns a server of exporter's expositions. Until SetReader
// is called, and once the reader says tracing has ended, /metrics
// answers 503 Service Unavailable.
func NewServer(exporter *Exporter) *Server {
	return &Server{exporter: exporter}
}

// SetReader sets the function that reads a snapshot of the maps:
// runtime.Options.Snapshots hands it over once the probes are attached.
func (s *Server) SetReader(read func() (*runtime.Snapshot, error)) {
	s.read.Store(&read)
}

// Serve answers the connections l accepts until l is closed.
func (s *Server) Serve(l *Listener) error {
	for {
		conn, err := l.Accept()
		if err != nil {
			return err
		}
		go s.answer(conn)
	}
}

// requestTimeout bounds how long a client may take to send its request
// and read the answer.
const requestTimeout = 30 * time.Second

// maxHeaderLines bounds the header lines of a request.
const maxHeaderLines = 100

// answer reads one request from conn, answers it and closes conn.
func (s *Server) answer(conn *os.File) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(requestTimeout))
	method, target, accept, err := readRequest(bufio.NewReaderSize(conn, 4096))
	if err != nil {
		respond(conn, "400 Bad Request", "text/plain; charset=utf-8", []byte(err.Error()+"\n"), true)
		return
	}
	status, contentType, body := s.page(method, target, accept)
	respond(conn, status, contentType, body, method != "HEAD")
}

// page is the answer to a request: its status, content type and body.
func (s *Server) page(method, target, accept string) (status, contentType string, body []byte) {
	const plain = "text/plain; charset=utf-8"
	if path, _, _ := strings.Cut(target, "?"); path != "/metrics" {
		return "404 Not Found", plain, []byte("gtrace serves /metrics\n")
	}
	if method != "GET" && method != "HEAD" {
		return "405 Method Not Allowed", plain, []byte("/metrics answers GET\n")
	}
	read := s.read.Load()
	if read == nil {
		return "503 Service Unavailable", plain, []byte("the probes are not attached yet\n")
	}
	snap, err := (*read)()
	if err != nil {
		return "503 Service Unavailable", plain, []byte(err.Error() + "\n")
	}
	format := Negotiate(accept)
	var b bytes.Buffer
	if err := s.exporter.Write(&b, snap, format); err != nil {
		return "500 Internal Server Error", plain, []byte(err.Error() + "\n")
	}
	return "200 OK", format.ContentType(), b.Bytes()
}

// readRequest reads a request's line and headers and returns its method,
// target and Accept header. A request to /metrics has no body.
func readRequest(r *bufio.Reader) (method, target, accept string, err error) {
	line, err := readLine(r)
	if err != nil {
		return "", "", "", err
	}
	parts := strings.Fields(line)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "HTTP/1.") {
		return "", "", "", fmt.Errorf("malformed request line %q", line)
	}
	method, target = parts[0], parts[1]
	for range maxHeaderLines {
		line, err := readLine(r)
		if err != nil {
			return "", "", "", err
		}
		if line == "" {
			return method, target, accept, nil
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Accept") {
			accept = strings.TrimSpace(value)
		}
	}
	return "", "", "", fmt.Errorf("more than %d header lines", maxHeaderLines)
}

// readLine reads one line without its line end; a line longer than the
// reader's buffer is an error.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return "", fmt.Errorf("request line or header longer than %d bytes", r.Size())
	}
	if err != nil {
		return "", fmt.Errorf("read request: %w", err)
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// respond writes an answer and asks the client to close the connection.
func respond(w io.Writer, status, contentType string, body []byte, withBody bool) {
	head := "HTTP/1.1 " + status + "\r\n" +
		"Content-Type: " + contentType + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"Connection: close\r\n\r\n"
	if !withBody {
		body = nil
	}
	w.Write(append([]byte(head), body...))
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

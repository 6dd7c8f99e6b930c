package metrics

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gtrace/runtime"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		accept string
		want   Format
	}{
		{"", Text},
		{"*/*", Text},
		{"text/plain", Text},
		{"application/openmetrics-text", OpenMetrics},
		// What Prometheus 2.42 sends.
		{"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", OpenMetrics},
		{"text/plain;version=0.0.4;q=0.9, application/openmetrics-text;q=0.5", Text},
		{"text/plain, application/openmetrics-text", Text},
		{"application/openmetrics-text;q=0", Text},
	}
	for _, tt := range tests {
		if got := Negotiate(tt.accept); got != tt.want {
			t.Errorf("Accept %q: format %d, want %d", tt.accept, got, tt.want)
		}
	}
}

// serverRequest is one request to the server and what its answer must
// hold.
type serverRequest struct {
	method, path, accept string
	status               int
	contentType          string
	// body is the whole body; or, where contains is set, the body has
	// contains and not lacks.
	body, contains, lacks string
}

// TestServer has a server on a loopback listener answer requests: to
// /metrics before, while and after tracing, in each format, and to what
// it refuses.
func TestServer(t *testing.T) {
	e, err := NewExporter(compile(t, everyKind), 0, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(e)
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(srv.Shutdown)
	base := "http://" + l.Addr().String()

	const (
		om    = "application/openmetrics-text; version=1.0.0"
		plain = "text/plain; charset=utf-8"
	)
	check := func(when string, tt serverRequest) {
		t.Helper()
		req, err := http.NewRequest(tt.method, base+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %s %s: %v", when, tt.method, tt.path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %s %s: %v", when, tt.method, tt.path, err)
		}
		body := string(b)
		ct := resp.Header.Get("Content-Type")
		bodyOK := body == tt.body
		if tt.contains != "" {
			bodyOK = strings.Contains(body, tt.contains) && !strings.Contains(body, tt.lacks)
		}
		if resp.StatusCode != tt.status || ct != tt.contentType || !bodyOK {
			t.Errorf("%s: %s %s (Accept %q): %d, %s:\n%s\nwant %d, %s, body %q, with %q, without %q",
				when, tt.method, tt.path, tt.accept, resp.StatusCode, ct, body,
				tt.status, tt.contentType, tt.body, tt.contains, tt.lacks)
		}
	}

	check("before tracing", serverRequest{method: "GET", path: "/metrics", accept: om,
		status: 503, contentType: plain, body: "the probes are not attached yet\n"})
	var ended atomic.Bool
	srv.SetReader(func() (*runtime.Snapshot, error) {
		if ended.Load() {
			return nil, runtime.ErrEnded
		}
		return everyKindSnapshot, nil
	})
	for _, tt := range []serverRequest{
		{method: "GET", path: "/metrics", accept: om, status: 200, contentType: OpenMetrics.ContentType(), body: everyKindOpenMetrics},
		// What Prometheus sends.
		{method: "GET", path: "/metrics", accept: "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
			status: 200, contentType: OpenMetrics.ContentType(), body: everyKindOpenMetrics},
		{method: "GET", path: "/metrics?x=1", status: 200, contentType: Text.ContentType(),
			contains: "# TYPE gtrace_bytes_total counter\n", lacks: "# EOF"},
		{method: "GET", path: "/metrics", accept: "text/plain;version=0.0.4", status: 200, contentType: Text.ContentType(),
			contains: "gtrace_sizes_count 5\n", lacks: "# EOF"},
		{method: "HEAD", path: "/metrics", accept: om, status: 200, contentType: OpenMetrics.ContentType()},
		{method: "GET", path: "/", status: 404, contentType: plain, body: "gtrace serves /metrics\n"},
		{method: "GET", path: "/metrics/x", status: 404, contentType: plain, body: "gtrace serves /metrics\n"},
		{method: "POST", path: "/metrics", status: 405, contentType: plain, body: "/metrics answers GET\n"},
	} {
		check("while tracing", tt)
	}
	ended.Store(true)
	check("after tracing", serverRequest{method: "GET", path: "/metrics", accept: om,
		status: 503, contentType: plain, body: "tracing has ended\n"})

	// Shutdown ends Serve and closes the listener.
	srv.Shutdown()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v, want %v", err, http.ErrServerClosed)
	}
	if conn, err := net.Dial("tcp", l.Addr().String()); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Shutdown", l.Addr())
	}
}

func TestListen(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tt := range []struct {
		addr, want string
	}{
		{"127.0.0.1:0", ""},
		{"localhost:0", ""},
		{"nonsense", "listen on nonsense: address nonsense: missing port in address"},
		{"127.0.0.1:70000", "listen on 127.0.0.1:70000: address 70000: invalid port"},
		{"127.0.0.1:1e9", "listen on 127.0.0.1:1e9: lookup tcp/1e9: unknown port"},
		{busy.Addr().String(), "listen on " + busy.Addr().String() + ": bind: address already in use"},
	} {
		l, err := Listen(tt.addr)
		if tt.want != "" {
			if err == nil || err.Error() != tt.want {
				t.Errorf("Listen(%q): %v, want %q", tt.addr, err, tt.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("Listen(%q): %v", tt.addr, err)
			continue
		}
		// A client connects to the address the listener reports.
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Errorf("Listen(%q): connect to %s: %v", tt.addr, l.Addr(), err)
		} else {
			conn.Close()
		}
		l.Close()
	}
}

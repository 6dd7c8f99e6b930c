package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// TestServer sends raw requests to a server on loopback: /metrics in
// each format, before and after tracing, and what else it refuses.
func TestServer(t *testing.T) {
	e, err := NewExporter(compile(t, `BEGIN { @c = count(); }`), 0, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(e)
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go srv.Serve(l)

	get := func(request string) (status, contentType, body string) {
		t.Helper()
		conn, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprint(conn, request)
		r := bufio.NewReader(conn)
		line, _ := r.ReadString('\n')
		status = strings.TrimSpace(strings.TrimPrefix(line, "HTTP/1.1 "))
		for {
			h, err := r.ReadString('\n')
			if err != nil || h == "\r\n" {
				break
			}
			if v, ok := strings.CutPrefix(h, "Content-Type: "); ok {
				contentType = strings.TrimSpace(v)
			}
		}
		b, _ := io.ReadAll(r)
		return status, contentType, string(b)
	}

	const om = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n"
	if status, _, _ := get(om); status != "503 Service Unavailable" {
		t.Errorf("before tracing: %s, want 503", status)
	}
	var ended atomic.Bool
	srv.SetReader(func() (*runtime.Snapshot, error) {
		if ended.Load() {
			return nil, runtime.ErrEnded
		}
		return &runtime.Snapshot{Maps: everyKindSnapshot.Maps[:0]}, nil
	})
	status, contentType, body := get(om)
	if status != "200 OK" || contentType != OpenMetrics.ContentType() || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("OpenMetrics: %s, %s:\n%s", status, contentType, body)
	}
	status, contentType, body = get("GET /metrics?x=1 HTTP/1.0\r\n\r\n")
	if status != "200 OK" || contentType != Text.ContentType() || strings.Contains(body, "# EOF") ||
		!strings.Contains(body, "# TYPE gtrace_self_lost_events_total counter\n") {
		t.Errorf("text: %s, %s:\n%s", status, contentType, body)
	}
	if status, _, body := get("HEAD /metrics HTTP/1.1\r\n\r\n"); status != "200 OK" || body != "" {
		t.Errorf("HEAD: %s, body %q", status, body)
	}
	if status, _, _ := get("GET / HTTP/1.1\r\n\r\n"); status != "404 Not Found" {
		t.Errorf("GET /: %s, want 404", status)
	}
	if status, _, _ := get("POST /metrics HTTP/1.1\r\n\r\n"); status != "405 Method Not Allowed" {
		t.Errorf("POST: %s, want 405", status)
	}
	if status, _, _ := get("nonsense\r\n\r\n"); status != "400 Bad Request" {
		t.Errorf("nonsense: %s, want 400", status)
	}
	if status, _, _ := get("GET /metrics HTTP/1.1\r\nX: " + string(bytes.Repeat([]byte("a"), 5000)) + "\r\n\r\n"); status != "400 Bad Request" {
		t.Errorf("long header: %s, want 400", status)
	}
	ended.Store(true)
	if status, _, body := get(om); status != "503 Service Unavailable" || body != "tracing has ended\n" {
		t.Errorf("after tracing: %s, %q", status, body)
	}
}

func TestListen(t *testing.T) {
	for addr, want := range map[string]string{"127.0.0.1:0": "127.0.0.1", "localhost:0": "127.0.0.1", "[::1]:0": "::1"} {
		l, err := Listen(addr)
		if errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT) {
			continue // no IPv6 loopback here
		}
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		// A client connects to the address Listen reports.
		conn, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Errorf("Listen(%q): connect to %s: %v", addr, l.Addr(), err)
		} else {
			conn.Close()
		}
		if host, _, _ := net.SplitHostPort(l.Addr()); host != want {
			t.Errorf("Listen(%q) listens on %s, want %s", addr, l.Addr(), want)
		}
		l.Close()
	}
	for addr, want := range map[string]string{
		"nonsense":       "missing port in address",
		"example.com:80": `"example.com" is not an IP address (or localhost)`,
		"127.0.0.1:http": `port "http" is not a number`,
		"127.0.0.1:1e9":  `port "1e9" is not a number`,
	} {
		if _, err := Listen(addr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Listen(%q): %v, want %q", addr, err, want)
		}
	}
}

// TestListenerClose checks that closing the listener ends a waiting
// Serve.
func TestListenerClose(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- NewServer(nil).Serve(l) }()
	time.Sleep(10 * time.Millisecond) // let Serve wait in Accept
	l.Close()
	if err := <-done; err == nil {
		t.Error("Serve returned no error after Close")
	}
}

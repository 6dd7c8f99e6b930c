package webview

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"gtrace/calltrace"
)

// bioLife is one bio's life: submitted on one thread, completed on
// another, its size changing.
func bioLife() *calltrace.Recording {
	r := &calltrace.Recording{Command: "class", Struct: "bio", Fields: []string{"bi_iter.bi_size"}}
	b := calltrace.NewBuilder(r)
	t := b.Track("bio 0xffff0001 #1")
	b.Enter(t, &calltrace.Call{Func: "submit_bio", Entry: 1000, Tid: 100, Pid: 100, Comm: "dd", Fields: []string{"4096"}})
	b.Enter(t, &calltrace.Call{Func: "blk_mq_submit_bio", Entry: 1200, Tid: 100, Pid: 100, Comm: "dd", Fields: []string{"4096"}})
	b.Exit(t, 100, "blk_mq_submit_bio", 1800)
	b.Exit(t, 100, "submit_bio", 2000)
	b.Enter(t, &calltrace.Call{Func: "bio_endio", Entry: 3000, CPU: 1, Comm: "swapper/1", Fields: []string{"0"}})
	b.Exit(t, 0, "bio_endio", 3500)
	return r
}

func TestHandler(t *testing.T) {
	rec := bioLife()
	var trace bytes.Buffer
	if err := rec.WriteChrome(&trace); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(rec))
	defer srv.Close()
	for _, tc := range []struct {
		path, contentType string
		code              int
		has               string
	}{
		{"/", "text/html", 200, `<script src="app.js"></script>`},
		{"/app.js", "text/javascript", 200, `fetch("trace.json")`},
		{"/style.css", "text/css", 200, ".bar {"},
		{"/trace.json", "application/json", 200, trace.String()},
		{"/index.html", "", 404, ""},
		{"/trace.json/x", "", 404, ""},
		{"/nothing", "", 404, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.code)
			}
			if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, tc.contentType) {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != "default-src 'self'" {
				t.Errorf("Content-Security-Policy %q, want only the server's own address", got)
			}
			if !strings.Contains(string(body), tc.has) {
				t.Errorf("body does not hold %q:\n%s", tc.has, body)
			}
		})
	}
}

// TestTraceReadsBack checks that /trace.json is the recording, as
// calltrace reads it.
func TestTraceReadsBack(t *testing.T) {
	rec := bioLife()
	w := httptest.NewRecorder()
	Handler(rec).ServeHTTP(w, httptest.NewRequest("GET", "/trace.json", nil))
	back, err := calltrace.ReadChrome(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	rec.WriteText(&want)
	back.WriteText(&got)
	if got.String() != want.String() {
		t.Errorf("read back:\n%s\nwant:\n%s", got.String(), want.String())
	}
}

// TestPageSelfContained checks that the page loads nothing from
// elsewhere: no address with a scheme or host in its files.
func TestPageSelfContained(t *testing.T) {
	outside := regexp.MustCompile(`(?i)(https?:|//[a-z0-9.-]+\.[a-z]{2,}|@import|url\()`)
	for name, body := range map[string][]byte{"index.html": indexHTML, "style.css": styleCSS, "app.js": appJS} {
		if m := outside.Find(body); m != nil {
			t.Errorf("%s refers to %q, which needs the network", name, m)
		}
	}
}

func TestServeStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, bioLife()) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/trace.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after its context ended: %v, want nil", err)
	}
	if conn, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		conn.Close()
		t.Errorf("the listener is still open after Serve returned")
	}
}

package webview

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"gtrace/calltrace"
)

var (
	//go:embed index.html
	indexHTML []byte
	//go:embed style.css
	styleCSS []byte
	//go:embed app.js
	appJS []byte
)

// Handler serves the page and rec, as doc.go describes. rec is written
// out once, at the first request for it, and must not change after.
func Handler(rec *calltrace.Recording) http.Handler {
	// A recording of a busy machine is megabytes of JSON: write it once,
	// not at each reload of the page.
	trace := sync.OnceValues(func() ([]byte, error) {
		var buf bytes.Buffer
		err := rec.WriteChrome(&buf)
		return buf.Bytes(), err
	})
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", content("text/html; charset=utf-8", indexHTML))
	mux.Handle("GET /style.css", content("text/css; charset=utf-8", styleCSS))
	mux.Handle("GET /app.js", content("text/javascript; charset=utf-8", appJS))
	mux.HandleFunc("GET /trace.json", func(w http.ResponseWriter, r *http.Request) {
		body, err := trace()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the server's own address: the page works offline, and a
		// recording's text can never load or run anything else.
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

func content(contentType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	})
}

// Serve serves the page of rec on ln until ctx is done, then closes ln
// and the connections, and returns nil; or returns the error that ended
// serving before.
func Serve(ctx context.Context, ln net.Listener, rec *calltrace.Recording) error {
	srv := &http.Server{Handler: Handler(rec), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(stopCtx); err != nil {
		srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRecordingErrors checks that a file or address that cannot be
// served fails at once, with a message, before serving.
func TestServeRecordingErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	valid := write("ok.json", `{"traceEvents":[],"otherData":{"command":"class","start_ns":"0"}}`)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name, addr, path, want string
	}{
		{"missing", "127.0.0.1:0", filepath.Join(dir, "none.json"), "ERROR: open " + filepath.Join(dir, "none.json") + ": no such file or directory\n"},
		{"not json", "127.0.0.1:0", write("text.json", "hello"), "ERROR: " + filepath.Join(dir, "text.json") + ": read trace: invalid character 'h'"},
		{"unpaired", "127.0.0.1:0", write("b.json", `{"traceEvents":[{"name":"f","ph":"B","ts":1,"pid":1,"tid":1}]}`), "B of f on pid 1 tid 1 has no E\n"},
		{"other json", "127.0.0.1:0", write("other.json", `{"type": "attached_probes"}`), "not a recording of gtrace class or gtrace flow"},
		{"address in use", busy.Addr().String(), valid, "ERROR: --serve " + busy.Addr().String() + ": listen tcp"},
		{"bad address", "nowhere", valid, "ERROR: --serve nowhere: listen tcp: address nowhere: missing port in address\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := serveRecording(tc.addr, tc.path, &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() > 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing and %q", code, stdout.String(), stderr.String(), tc.want)
			}
		})
	}
}

func TestViewUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"file.json"}, {"--serve", ":0"}, {"--serve", ":0", "a", "b"}, {"--port", "1", "a"}} {
		var stdout, stderr strings.Builder
		if code := viewCmd(args, &stdout, &stderr); code != 1 || !strings.HasPrefix(stderr.String(), "ERROR: invalid arguments to view\n\nUSAGE:") {
			t.Errorf("gtrace view %q: exit %d, stderr %q; want 1 and the usage", args, code, stderr.String())
		}
	}
	var stdout, stderr strings.Builder
	if code := viewCmd([]string{"-h"}, &stdout, &stderr); code != 0 || stdout.String() != viewUsage {
		t.Errorf("gtrace view -h: exit %d, stdout %q", code, stdout.String())
	}
}

func TestPageURL(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080/"},
		{"0.0.0.0:80", "http://localhost:80/"},
		{"[::]:9", "http://localhost:9/"},
		{"[::1]:9", "http://[::1]:9/"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageURL(addr); got != tc.want {
			t.Errorf("pageURL(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRun runs cases against fake tracers, shell scripts that print what
// a tracer would, to check the engine's protocol: AFTER once attached, the
// TIMEOUT, exit codes, and that nothing is left running.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "want.txt"), []byte("@a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, script string
		c            testCase
		assume       time.Duration
		want         status
		timedOut     bool
		why          string
	}{
		{
			name:     "AFTER runs once attached; a timed out case passes on its output",
			script:   "echo __BPFTRACE_NOTIFY_PROBES_ATTACHED; echo hello; exec sleep 100",
			c:        testCase{prog: "x", expects: []expect{{expectText, "hello"}}, timeout: 1, after: "touch after"},
			want:     passed,
			timedOut: true,
		},
		{
			name:   "a timed out case fails on a missing line",
			script: "echo __BPFTRACE_NOTIFY_PROBES_ATTACHED; exec sleep 100",
			c:      testCase{prog: "x", expects: []expect{{expectText, "hello"}}, timeout: 1},
			want:   failed,
			why:    "timeout (1s): expected line not found: hello",
		},
		{
			name:   "an error comes first in the reason",
			script: "echo 'stdin:1:1-2: ERROR: boom'; exit 1",
			c:      testCase{prog: "x", expects: []expect{{expectText, "ok"}}, timeout: 5},
			want:   failed,
			why:    "stdin:1:1-2: ERROR: boom [exit code 1, want 0]",
		},
		{
			name:   "WILL_FAIL wants a failure",
			script: "echo fine",
			c:      testCase{run: "{{BPFTRACE}}", expects: []expect{{expectText, "fine"}}, timeout: 5, willFail: true},
			want:   failed,
			why:    "want failure",
		},
		{
			name:     "an assumed attach drops only the attach line from exact output",
			script:   "echo 'Attaching 1 probe...'; echo '@a: 1'; exec sleep 100",
			c:        testCase{prog: "x", expects: []expect{{expectFile, "want.txt"}}, exact: true, timeout: 1},
			assume:   200 * time.Millisecond,
			want:     passed,
			timedOut: true,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(dir, "pid"+strconv.Itoa(i))
			tracer := filepath.Join(dir, "tracer"+strconv.Itoa(i))
			script := "#!/bin/sh\necho $$ > " + pidFile + "\n" + tt.script + "\n"
			if err := os.WriteFile(tracer, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			r := &runner{tracer: tracer, testsDir: dir, kernel: "6.1", archs: []string{"x86_64", "le"}, assumeAttached: tt.assume}
			tt.c.file, tt.c.name, tt.c.localizeTS = "f", "n", -1
			res := r.run(&tt.c)
			if res.Status != tt.want || !strings.Contains(res.Reason, tt.why) || res.TimedOut != tt.timedOut && tt.want == passed {
				t.Errorf("got %s %q, want %s %q; output:\n%s", res.Status, res.Reason, tt.want, tt.why, res.Output)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process group %d still there: %v", pid, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err != nil {
		t.Errorf("AFTER did not run: %v", err)
	}
}

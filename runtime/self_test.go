package runtime

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// TestSelfSignal sends gtrace SIGUSR1, as bpftrace's signal tests do:
// every self:signal:SIGUSR1 probe runs, in the script's order, on each
// signal, and the signal does not end gtrace.
func TestSelfSignal(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name, src string
		signals   int
		want      string
	}{
		{"one", `self:signal:SIGUSR1 { printf("signal handler\n"); exit(); }`, 1, "signal handler\n"},
		{"order", `self:signal:SIGUSR1 { printf("first"); } self:signal:SIGUSR1 { printf(" second\n"); exit(); }`, 1, "first second\n"},
		{"each signal", `BEGIN { printf("begin\n"); } self:signal:SIGUSR1 { @n++; printf("%d\n", @n); if (@n == 3) { exit(); } } END { clear(@n); }`, 3, "begin\n1\n2\n3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := compile(t, tt.src)
			var stdout, stderr bytes.Buffer
			// Once tracing starts, the signals are gtrace's to catch:
			// they would end the test otherwise. A signal that is
			// already pending is not queued again, so they are spaced.
			attached := func() {
				go func() {
					for range tt.signals {
						if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
							t.Error(err)
						}
						time.Sleep(100 * time.Millisecond)
					}
				}()
			}
			_, err := Run(out, &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Quiet: true, Attached: attached})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			if got := strings.TrimRight(stdout.String(), "\n") + "\n"; got != tt.want {
				t.Errorf("printed %q, want %q; stderr %q", got, tt.want, stderr.String())
			}
		})
	}
}

package runtime

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// stallingPrinter counts printf lines. At the first it sends gtrace
// SIGINT and returns only once the signal has arrived and the runtime
// has had time to stop the probes, so that the events sent meanwhile are
// still queued when tracing stops.
type stallingPrinter struct {
	output.Printer
	lines    int
	signaled chan os.Signal
}

func (p *stallingPrinter) Printf(string) error {
	p.lines++
	if p.lines == 1 {
		syscall.Kill(syscall.Getpid(), syscall.SIGINT)
		<-p.signaled
		time.Sleep(200 * time.Millisecond) // the runtime's handler runs too
	}
	return nil
}

// TestKeepQueued stops tracing with a signal while events are queued:
// by default they are dropped, as bpftrace drops them; with KeepQueued
// every event sent before the probes were detached is handled.
func TestKeepQueued(t *testing.T) {
	testutils.RequireRoot(t)
	const opens = 200
	src := `tracepoint:syscalls:sys_enter_openat /pid == ` + strconv.Itoa(os.Getpid()) +
		` && str(args.filename) == "/dev/null"/ { printf("open\n"); }`
	for _, keep := range []bool{false, true} {
		out := compile(t, src)
		var stderr strings.Builder
		p := &stallingPrinter{Printer: output.NewText(&strings.Builder{}, &stderr), signaled: make(chan os.Signal, 1)}
		signal.Notify(p.signaled, syscall.SIGINT)
		// Every open is traced before the first event is handled.
		attached := func() {
			for range opens {
				if f, err := os.Open("/dev/null"); err == nil {
					f.Close()
				}
			}
		}
		opts := &Options{Printer: p, Stderr: &stderr, Quiet: true, Attached: attached, KeepQueued: keep}
		_, err := Run(out, opts)
		signal.Stop(p.signaled)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		if keep && p.lines != opens {
			t.Errorf("KeepQueued: %d events handled, want all %d", p.lines, opens)
		}
		if !keep && p.lines >= opens {
			t.Errorf("without KeepQueued: all %d events handled, want those queued at the signal dropped", p.lines)
		}
	}
}

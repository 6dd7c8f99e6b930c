package reliability

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"gtrace/bench"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestBeginAfterAttach checks that, as in bpftrace, what BEGIN prints
// appears only once every probe is attached: a tool's header is never
// printed above an attach error. No machine here has hardware counters,
// so attaching a hardware probe fails.
func TestBeginAfterAttach(t *testing.T) {
	testutils.RequireRoot(t)
	if _, err := os.Stat("/sys/bus/event_source/devices/cpu"); err == nil {
		testutils.Skip(t, "this machine has a hardware PMU: its hardware probe attaches")
	}
	r := harness.Gtrace(t, "-e", `BEGIN { printf("header\n"); } hardware:cycles:100000 { @ = count(); }`)
	if r.Code != 1 {
		t.Errorf("exit code %d, want 1", r.Code)
	}
	if strings.Contains(r.Stdout, "header") {
		t.Errorf("BEGIN's output was printed although a probe failed to attach:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "ERROR: Unable to attach probe: hardware:cycles:100000.") {
		t.Errorf("stderr does not name the probe that failed:\n%s", r.Stderr)
	}
}

// TestIdleLoopSleeps checks that gtrace, tracing with nothing to print,
// does not wake up on a timer: its threads switch context a few times at
// most in two seconds (the event loop used to wake every 100 ms).
func TestIdleLoopSleeps(t *testing.T) {
	testutils.RequireRoot(t)
	tracer := harness.StartTracing(t, `tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }`, io.Discard)
	time.Sleep(500 * time.Millisecond) // the end of starting up
	before, err := bench.ContextSwitches(tracer.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	after, err := bench.ContextSwitches(tracer.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d context switches in 2 s", after-before)
	if after-before > 10 {
		t.Errorf("gtrace switched context %d times in 2 s with nothing to do", after-before)
	}
}

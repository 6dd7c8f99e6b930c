package e2e

import (
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestTopTerminal runs the refreshing view of `gtrace top` in a tmux
// terminal: it draws the table sorted as asked, and quits on q.
func TestTopTerminal(t *testing.T) {
	testutils.RequireRoot(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		testutils.Skip(t, "tmux not found (apt-get install tmux)")
	}
	// Two programs of a tracer of our own, so that there is an order
	// to check.
	harness.StartTracing(t, "tracepoint:sched:sched_switch { @a = count(); } tracepoint:sched:sched_wakeup { @b = count(); }", io.Discard)

	name := fmt.Sprintf("gtrace-top-%d", time.Now().UnixNano())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", name, "-x", "200", "-y", "50", harness.Bin()+" top --interval 200ms --sort id; echo gtrace-exited-$?; sleep 30")
	defer exec.Command("tmux", "kill-session", "-t", name).Run()

	screen := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		screen = tmux("capture-pane", "-p", "-t", name)
		if strings.Contains(screen, "RUN_CNT") {
			break
		}
	}
	lines := strings.Split(screen, "\n")
	if len(lines) == 0 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "ID ") {
		t.Fatalf("no table at the top of the screen:\n%s", screen)
	}
	// --sort id: ids ascend down the table.
	last, rows := -1, 0
	for _, l := range lines[1:] {
		var id int
		if _, err := fmt.Sscan(l, &id); err != nil {
			continue
		}
		if id <= last {
			t.Errorf("ids out of order: %d after %d\n%s", id, last, screen)
		}
		last = id
		rows++
	}
	if rows < 2 {
		t.Errorf("%d programs listed, want at least the tracer's two:\n%s", rows, screen)
	}

	tmux("send-keys", "-t", name, "q")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if screen = tmux("capture-pane", "-p", "-t", name); strings.Contains(screen, "gtrace-exited-0") {
			return
		}
	}
	t.Errorf("gtrace top did not quit on q:\n%s", screen)
}

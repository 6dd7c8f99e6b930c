package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"gtrace/bench"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestBenchOverheadSmoke runs a short overhead benchmark, gtrace and the
// floor on three scripts, and checks that every point of the table is
// there and measured. It asserts no timing: figures belong to
// docs/performance.md.
func TestBenchOverheadSmoke(t *testing.T) {
	testutils.RequireRoot(t)
	const events = 3000
	r := harness.RunTimeout(t, 3*time.Minute, harness.Bin(), "bench", "overhead", "-n", "1", "--events", "3000",
		"--scripts", "4,9,18", "--tracer", "gtrace="+harness.Bin()+" {}", "-f", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var res bench.OverheadResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if strings.Join(res.Tracers, ",") != "floor,gtrace" || res.Events != events || res.BaselineNs <= 0 {
		t.Errorf("tracers %v, events %d, baseline %v", res.Tracers, res.Events, res.BaselineNs)
	}
	want := []struct {
		script int
		tracer string
	}{{4, "floor"}, {4, "gtrace"}, {9, "floor"}, {9, "gtrace"}, {18, "floor"}, {18, "gtrace"}}
	if len(res.Points) != len(want) {
		t.Fatalf("%d points, want %d: %+v", len(res.Points), len(want), res.Points)
	}
	for i, w := range want {
		p := res.Points[i]
		if p.Script != w.script || p.Tracer != w.tracer {
			t.Errorf("point %d is script %d under %s, want %d under %s", i, p.Script, p.Tracer, w.script, w.tracer)
		}
		// Every dd read fires the probe; other processes' reads may too.
		if p.Runs < events || p.KernelNs <= 0 || p.EventRate <= 0 {
			t.Errorf("script %d under %s: %d runs, %v ns per run, %v events/s; want at least %d runs",
				p.Script, p.Tracer, p.Runs, p.KernelNs, p.EventRate, events)
		}
	}

	// The same run as a table, with the SVG chart.
	svg := t.TempDir() + "/overhead.svg"
	r = harness.RunTimeout(t, 3*time.Minute, harness.Bin(), "bench", "overhead", "-n", "1", "--events", "1000",
		"--scripts", "1", "--tracer", "gtrace="+harness.Bin()+" {}", "--svg", svg)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("no chart in %s: %v", svg, err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(line); len(f) == 11 {
			rows[strings.Join(f[:3], " ")] = true
		}
	}
	for _, row := range []string{"01 control floor", "01 control gtrace"} {
		if !rows[row] {
			t.Errorf("no row %q in\n%s", row, r.Stdout)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "wants overhead, attach, idle or bigmap"},
		{[]string{"bench", "nonsense"}, "wants overhead, attach, idle or bigmap"},
		{[]string{"bench", "overhead", "-n", "0"}, "invalid arguments"},
		{[]string{"bench", "overhead", "--scripts", "19"}, `no script "19"`},
		{[]string{"bench", "overhead", "--tracer", "x=/no/such/tracer"}, "tracer x"},
	} {
		r := harness.Gtrace(t, c.args...)
		if r.Code == 0 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("gtrace %v: exit %d, stderr %q; want an error with %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
}

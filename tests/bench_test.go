package tests

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"gtrace/bench"
)

// TestBenchOverheadSmoke runs a short overhead benchmark, gtrace and the
// floor on three scripts, and checks that every point of the table is
// there and measured. It asserts no timing: figures belong to
// docs/performance.md.
func TestBenchOverheadSmoke(t *testing.T) {
	requireRoot(t)
	const events = 3000
	r := runTimeout(t, 3*time.Minute, gtraceBin, "bench", "overhead", "-n", "1", "--events", "3000",
		"--scripts", "4,9,18", "--tracer", "gtrace="+gtraceBin+" {}", "-f", "json")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var res bench.OverheadResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
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
	r = runTimeout(t, 3*time.Minute, gtraceBin, "bench", "overhead", "-n", "1", "--events", "1000",
		"--scripts", "1", "--tracer", "gtrace="+gtraceBin+" {}", "--svg", svg)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("no chart in %s: %v", svg, err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 11 {
			rows[strings.Join(f[:3], " ")] = true
		}
	}
	for _, row := range []string{"01 control floor", "01 control gtrace"} {
		if !rows[row] {
			t.Errorf("no row %q in\n%s", row, r.stdout)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "wants overhead, attach or idle"},
		{[]string{"bench", "nonsense"}, "wants overhead, attach or idle"},
		{[]string{"bench", "overhead", "-n", "0"}, "invalid arguments"},
		{[]string{"bench", "overhead", "--scripts", "19"}, `no script "19"`},
		{[]string{"bench", "overhead", "--tracer", "x=/no/such/tracer"}, "tracer x"},
	} {
		r := gtrace(t, c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("gtrace %v: exit %d, stderr %q; want an error with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

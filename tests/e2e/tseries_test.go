package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestTSeriesChart runs an interval probe that writes a zigzag into a
// tseries at times it sets (BPFTRACE_DUMMY_TS_MAP) and exits: the chart
// at exit holds exactly one run's values, since exit() stops the probe.
func TestTSeriesChart(t *testing.T) {
	testutils.RequireRoot(t)
	cmd := exec.Command(harness.Bin(), "-q", "-e", `BEGIN { @ts = (uint64)2s; @v = -2; }
		i:ms:1 { $i = 0; while ($i < 6) { @series = tseries(@v, 500ms, 4); @ts += 500ms; @v += 1; $i++; }
		clear(@ts); clear(@v); exit(); }`)
	cmd.Env = append(os.Environ(), "TZ=UTC", "BPFTRACE_DUMMY_TS_MAP=@ts")
	r := harness.RunCmd(t, cmd, 30*time.Second)
	want := `@series:
             0                                                   3
hh:mm:ss.ms  |___________________________________________________|
00:00:03.000 *                                                   | 0
00:00:03.500 |                *                                  | 1
00:00:04.000 |                                 *                 | 2
00:00:04.500 |                                                   * 3
             v___________________________________________________v
             0                                                   3
`
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != strings.TrimSpace(want) {
		t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

// TestBenchMode runs bench probes as text and JSON, and refuses them
// alone without --bench.
func TestBenchMode(t *testing.T) {
	testutils.RequireRoot(t)
	script := `bench:count { @c = count(); } bench:hist { @h = hist(rand); }`
	r := harness.Gtrace(t, "--bench", "-e", script)
	text := regexp.MustCompile(`^Benchmark {32}Time\(ns\) {7}Iterations\n-{66}\ncount {36}\d+ +\d+\nhist {37}\d+ +\d+\n$`)
	if r.Code != 0 || !text.MatchString(r.Stdout) {
		t.Errorf("text: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "-q", "-f", "json", "--mode", "bench", "-e", script)
	json := regexp.MustCompile(`^{"type": "benchmark_result", "data": {"count": {"average": \d+, "iters": \d+}}}
{"type": "benchmark_result", "data": {"hist": {"average": \d+, "iters": \d+}}}
$`)
	if r.Code != 0 || !json.MatchString(r.Stdout) {
		t.Errorf("json: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "-e", script)
	if r.Code != 1 || r.Stderr != "ERROR: No probes attached; use --bench to run benchmark probes.\n" {
		t.Errorf("without --bench: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/internal/fakekernel"
	"gtrace/internal/testutils"
	"gtrace/output"
	"gtrace/runtime"
	"gtrace/sema"
)

// compile compiles src against the fake kernel, which needs no root.
func compile(t *testing.T, src string) *compiler.Program {
	t.Helper()
	prog, err := compiler.Compile([]byte(src), &compiler.Options{
		Check: sema.Options{Expand: fakekernel.Expand, Format: fakekernel.Format,
			KernelType: fakekernel.KernelType, EnumValue: fakekernel.EnumValue, Func: fakekernel.Func,
			Kaddr: fakekernel.Kaddr, KernelVar: fakekernel.KernelVar, HasKprobes: fakekernel.HasKprobes,
			Traceable: fakekernel.Traceable},
		Codegen: codegen.Options{NumCPU: 2},
	})
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return prog
}

// everyKind has a map of each aggregation, keyed in each way.
const everyKind = `tracepoint:syscalls:sys_enter_read {
	@reads[comm, pid] = count();
	@bytes = sum(args.count);
	@smallest = min(args.count);
	@largest[(fd = args.fd)] = max(args.count);
	@mean = avg(args.count);
	@sizes = hist(args.count);
	@linear[comm] = lhist(args.count, 0, 300, 100);
	@calls = stats(args.count);
	@last = args.fd;
	@name[pid] = comm;
}`

// everyKindSnapshot is what the runtime could read of everyKind's maps.
var everyKindSnapshot = &runtime.Snapshot{
	Maps: []*output.Map{
		{Name: "@bytes", Kind: output.Sum, Entries: []output.Entry{{Value: output.Uint(4200)}}},
		{Name: "@calls", Kind: output.Stats, Entries: []output.Entry{{Count: 4, Total: 4200}}},
		{Name: "@largest", Kind: output.Max, Entries: []output.Entry{
			{Key: []output.Value{output.Record(output.Field{Name: "fd", Value: output.Int(3)})}, Value: output.Uint(4096)},
			{Key: []output.Value{output.Record(output.Field{Name: "fd", Value: output.Int(0)})}, Value: output.Uint(100)},
		}},
		{Name: "@last", Kind: output.Scalar, Entries: []output.Entry{{Value: output.Int(-1)}}},
		{Name: "@linear", Kind: output.LHist, LMin: 0, LMax: 300, LStep: 100, Entries: []output.Entry{
			{Key: []output.Value{output.Str(`a "quoted" \ name`)}, Buckets: []uint64{0, 2, 0, 1}},
		}},
		{Name: "@mean", Kind: output.Avg, Entries: []output.Entry{{Count: 4, Total: 4201}}},
		{Name: "@name", Kind: output.Scalar},
		{Name: "@reads", Kind: output.Count, Entries: []output.Entry{
			{Key: []output.Value{output.Str("dd"), output.Int(42)}, Value: output.Uint(3)},
			{Key: []output.Value{output.Str("cat"), output.Int(7)}, Value: output.Uint(1)},
		}},
		{Name: "@sizes", Kind: output.Hist, Entries: []output.Entry{
			// -1, then 0, then 100 twice and 4000: bucket 8 is [64, 128).
			{Buckets: []uint64{1, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}},
		}},
		{Name: "@smallest", Kind: output.Min, Zero: &output.Entry{Value: output.Uint(0)}},
	},
	MapFull: map[string]uint64{"@reads": 2},
	Lost:    5,
	Probes: []output.ProbeStat{
		{Probe: "tracepoint:syscalls:sys_enter_read", Runs: 10, TotalNs: 1500, Missed: 1},
	},
}

// everyKindOpenMetrics is everyKindSnapshot in OpenMetrics.
const everyKindOpenMetrics = `# HELP gtrace_bytes sum() map @bytes of the script
# TYPE gtrace_bytes counter
gtrace_bytes_total 4200
# HELP gtrace_calls stats() map @calls of the script
# TYPE gtrace_calls summary
gtrace_calls_count 4
gtrace_calls_sum 4200
# HELP gtrace_largest max() map @largest of the script
# TYPE gtrace_largest gauge
gtrace_largest{fd="0"} 100
gtrace_largest{fd="3"} 4096
# HELP gtrace_last integer map @last of the script
# TYPE gtrace_last gauge
gtrace_last -1
# HELP gtrace_linear lhist() map @linear of the script
# TYPE gtrace_linear histogram
gtrace_linear_bucket{comm="a \"quoted\" \\ name",le="-1"} 0
gtrace_linear_bucket{comm="a \"quoted\" \\ name",le="99"} 2
gtrace_linear_bucket{comm="a \"quoted\" \\ name",le="199"} 2
gtrace_linear_bucket{comm="a \"quoted\" \\ name",le="299"} 3
gtrace_linear_bucket{comm="a \"quoted\" \\ name",le="+Inf"} 3
# HELP gtrace_mean avg() map @mean of the script
# TYPE gtrace_mean gauge
gtrace_mean 1050
# HELP gtrace_reads count() map @reads of the script
# TYPE gtrace_reads counter
gtrace_reads_total{comm="cat",pid="7"} 1
gtrace_reads_total{comm="dd",pid="42"} 3
# HELP gtrace_sizes hist() map @sizes of the script
# TYPE gtrace_sizes histogram
gtrace_sizes_bucket{le="-1"} 1
gtrace_sizes_bucket{le="0"} 2
gtrace_sizes_bucket{le="1"} 2
gtrace_sizes_bucket{le="3"} 2
gtrace_sizes_bucket{le="7"} 2
gtrace_sizes_bucket{le="15"} 2
gtrace_sizes_bucket{le="31"} 2
gtrace_sizes_bucket{le="63"} 2
gtrace_sizes_bucket{le="127"} 4
gtrace_sizes_bucket{le="255"} 4
gtrace_sizes_bucket{le="511"} 4
gtrace_sizes_bucket{le="1023"} 4
gtrace_sizes_bucket{le="2047"} 4
gtrace_sizes_bucket{le="4095"} 5
gtrace_sizes_bucket{le="+Inf"} 5
# HELP gtrace_smallest min() map @smallest of the script
# TYPE gtrace_smallest gauge
gtrace_smallest 0
# HELP gtrace_self_lost_events events the ring buffer refused because it was full
# TYPE gtrace_self_lost_events counter
gtrace_self_lost_events_total 5
# HELP gtrace_self_map_updates_refused map updates the kernel refused because the map was full
# TYPE gtrace_self_map_updates_refused counter
gtrace_self_map_updates_refused_total{map="@bytes"} 0
gtrace_self_map_updates_refused_total{map="@calls"} 0
gtrace_self_map_updates_refused_total{map="@largest"} 0
gtrace_self_map_updates_refused_total{map="@last"} 0
gtrace_self_map_updates_refused_total{map="@linear"} 0
gtrace_self_map_updates_refused_total{map="@mean"} 0
gtrace_self_map_updates_refused_total{map="@name"} 0
gtrace_self_map_updates_refused_total{map="@reads"} 2
gtrace_self_map_updates_refused_total{map="@sizes"} 0
gtrace_self_map_updates_refused_total{map="@smallest"} 0
# HELP gtrace_self_map_series_dropped keys of the map left out of this exposition by --metrics-max-series
# TYPE gtrace_self_map_series_dropped gauge
gtrace_self_map_series_dropped{map="@bytes"} 0
gtrace_self_map_series_dropped{map="@calls"} 0
gtrace_self_map_series_dropped{map="@largest"} 0
gtrace_self_map_series_dropped{map="@last"} 0
gtrace_self_map_series_dropped{map="@linear"} 0
gtrace_self_map_series_dropped{map="@mean"} 0
gtrace_self_map_series_dropped{map="@name"} 0
gtrace_self_map_series_dropped{map="@reads"} 0
gtrace_self_map_series_dropped{map="@sizes"} 0
gtrace_self_map_series_dropped{map="@smallest"} 0
# HELP gtrace_self_probe_runs runs of the probe's program, by the kernel's accounting
# TYPE gtrace_self_probe_runs counter
gtrace_self_probe_runs_total{probe="tracepoint:syscalls:sys_enter_read"} 10
# HELP gtrace_self_probe_run_seconds run time of the probe's program, by the kernel's accounting
# TYPE gtrace_self_probe_run_seconds counter
gtrace_self_probe_run_seconds_total{probe="tracepoint:syscalls:sys_enter_read"} 1.5e-06
# HELP gtrace_self_probe_missed hits that did not run the probe's program: recursion, kprobe misses
# TYPE gtrace_self_probe_missed counter
gtrace_self_probe_missed_total{probe="tracepoint:syscalls:sys_enter_read"} 1
# EOF
`

// TestWriteEveryKind checks the exposition of each kind of map in both
// formats: OpenMetrics as written above, and the classic text format,
// which names counter families with _total, gives histograms a _count
// and has no # EOF.
func TestWriteEveryKind(t *testing.T) {
	e, err := NewExporter(compile(t, everyKind), 0, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := e.Write(&om, everyKindSnapshot, OpenMetrics); err != nil {
		t.Fatal(err)
	}
	if om.String() != everyKindOpenMetrics {
		t.Errorf("OpenMetrics:\n%s\nwant:\n%s", om.String(), everyKindOpenMetrics)
	}

	want := strings.TrimSuffix(everyKindOpenMetrics, "# EOF\n")
	for _, counter := range []string{"gtrace_bytes", "gtrace_reads", "gtrace_self_lost_events", "gtrace_self_map_updates_refused",
		"gtrace_self_probe_runs", "gtrace_self_probe_run_seconds", "gtrace_self_probe_missed"} {
		want = strings.ReplaceAll(want, "# HELP "+counter+" ", "# HELP "+counter+"_total ")
		want = strings.ReplaceAll(want, "# TYPE "+counter+" ", "# TYPE "+counter+"_total ")
	}
	want = strings.Replace(want, "gtrace_linear_bucket{comm=\"a \\\"quoted\\\" \\\\ name\",le=\"+Inf\"} 3\n",
		"gtrace_linear_bucket{comm=\"a \\\"quoted\\\" \\\\ name\",le=\"+Inf\"} 3\ngtrace_linear_count{comm=\"a \\\"quoted\\\" \\\\ name\"} 3\n", 1)
	want = strings.Replace(want, "gtrace_sizes_bucket{le=\"+Inf\"} 5\n", "gtrace_sizes_bucket{le=\"+Inf\"} 5\ngtrace_sizes_count 5\n", 1)
	var text bytes.Buffer
	if err := e.Write(&text, everyKindSnapshot, Text); err != nil {
		t.Fatal(err)
	}
	if text.String() != want {
		t.Errorf("text format:\n%s\nwant:\n%s", text.String(), want)
	}
	promtoolCheck(t, text.String())
}

// promtoolCheck has Prometheus' own checker parse and lint an exposition
// in the classic text format.
func promtoolCheck(t *testing.T, exposition string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testutils.Skip(t, "needs promtool (Debian's prometheus) to check the exposition")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestSumType checks when a sum() map is a counter: only when no value
// it adds can be negative and nothing resets it.
func TestSumType(t *testing.T) {
	tests := []struct {
		name, body string
		want       metricType
	}{
		{"unsigned", `@s = sum(args.count);`, counter},
		{"literal", `@s = sum(5);`, counter},
		{"unsigned builtin", `@s[comm] = sum(pid);`, counter},
		{"signed cast", `@s = sum((int64)args.count);`, gauge},
		{"negative literal", `@s = sum(-1);`, gauge},
		{"signed variable", `$x = (int64)args.count; @s = sum($x);`, gauge},
		{"cleared", `@s = sum(args.count); clear(@s);`, gauge},
		{"zeroed", `@s = sum(args.count); zero(@s);`, gauge},
		{"deleted key", `@s[pid] = sum(args.count); delete(@s, pid);`, gauge},
		{"one of two signed", `@s = sum(args.count); @s = sum((int32)args.count);`, gauge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newPlan(compile(t, "tracepoint:syscalls:sys_enter_read { "+tt.body+" }"))
			if err != nil {
				t.Fatal(err)
			}
			if got := p["@s"].typ; got != tt.want {
				t.Errorf("%s: %s, want %s", tt.body, got, tt.want)
			}
		})
	}
}

// TestLabelNames checks how the parts of a key are named.
func TestLabelNames(t *testing.T) {
	tests := []struct {
		key  string
		want string
	}{
		{`comm`, "comm"},
		{`comm, pid`, "comm,pid"},
		{`(who = comm, fd = args.fd)`, "who,fd"},
		{`args.fd + 1, $v`, "key0,v"},
		{`$le, $quantile`, "key0,key1"},
		{`pid, pid`, "pid,key1"},
		{`args.fd`, "key0"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			p, err := newPlan(compile(t, "tracepoint:syscalls:sys_enter_read { $v = 1; $le = 2; $quantile = 3; @m["+tt.key+"] = count(); }"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p["@m"].labels, ","); got != tt.want {
				t.Errorf("@m[%s]: labels %s, want %s", tt.key, got, tt.want)
			}
		})
	}
}

// TestNames checks metric names: the map's name without its @, a
// counter's without _total, and a collision refused.
func TestNames(t *testing.T) {
	p, err := newPlan(compile(t, `BEGIN { @ = count(); @done_total = count(); @x = min(1); }`))
	if err != nil {
		t.Fatal(err)
	}
	for m, want := range map[string]string{"@": "gtrace_map", "@done_total": "gtrace_done", "@x": "gtrace_x"} {
		if got := p[m].name; got != want {
			t.Errorf("%s: %s, want %s", m, got, want)
		}
	}
	for _, src := range []string{
		`BEGIN { @self_lost_events = count(); }`,
		`BEGIN { @a = count(); @a_total = min(1); }`,
		`BEGIN { @h = hist(1); @h_bucket = min(1); }`,
	} {
		if _, err := newPlan(compile(t, src)); err == nil || !strings.Contains(err.Error(), "collides") {
			t.Errorf("%s: error %v, want a collision", src, err)
		}
	}
}

// TestMaxSeries checks that a map is cut to the limit, keeping the first
// series by label, that the cut is counted, and warned of once.
func TestMaxSeries(t *testing.T) {
	var warnings bytes.Buffer
	e, err := NewExporter(compile(t, `tracepoint:syscalls:sys_enter_read { @m[pid] = count(); }`), 2, &warnings)
	if err != nil {
		t.Fatal(err)
	}
	snap := &runtime.Snapshot{Maps: []*output.Map{{Name: "@m", Kind: output.Count, Entries: []output.Entry{
		{Key: []output.Value{output.Uint(3)}, Value: output.Uint(30)},
		{Key: []output.Value{output.Uint(1)}, Value: output.Uint(10)},
		{Key: []output.Value{output.Uint(2)}, Value: output.Uint(20)},
	}}}}
	for range 2 {
		var b bytes.Buffer
		if err := e.Write(&b, snap, OpenMetrics); err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{
			"gtrace_m_total{pid=\"1\"} 10\ngtrace_m_total{pid=\"2\"} 20\n# HELP",
			`gtrace_self_map_series_dropped{map="@m"} 1`,
		} {
			if !strings.Contains(b.String(), line) {
				t.Errorf("exposition lacks %q:\n%s", line, b.String())
			}
		}
	}
	if n := strings.Count(warnings.String(), "WARNING: map @m has 3 keys"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warnings.String())
	}
}

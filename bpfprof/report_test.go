package bpfprof

import (
	"strings"
	"testing"
)

func TestScale(t *testing.T) {
	tests := []struct {
		counter, enabled, running, want uint64
	}{
		{100, 50, 50, 100},
		{100, 100, 50, 200}, // ran half the time: twice the count
		{100, 0, 0, 100},    // never ran: as read
		{7, 10, 20, 7},
	}
	for _, tc := range tests {
		if got := scale(tc.counter, tc.enabled, tc.running); got != tc.want {
			t.Errorf("scale(%d, %d, %d) = %d, want %d", tc.counter, tc.enabled, tc.running, got, tc.want)
		}
	}
}

func TestMeasured(t *testing.T) {
	before := totals{Runs: 10, TimeNs: 1000}
	before.Counters[0] = reading{Counter: 500, Enabled: 100, Running: 100}
	after := totals{Runs: 14, TimeNs: 1800}
	after.Counters[0] = reading{Counter: 700, Enabled: 300, Running: 200}
	m := measured(before, after, []string{"cpu_clock_ns"})
	if m.RunCnt != 4 || m.RunTimeNs != 800 || m.AvgNs != 200 {
		t.Errorf("runs %+v, want 4 runs of 800 ns, 200 on average", m.Runs)
	}
	// 200 counted over 100 of 200 ns enabled: 400.
	if len(m.Counters) != 1 || m.Counters[0] != (Count{Name: "cpu_clock_ns", Total: 400, PerRun: 100}) {
		t.Errorf("counters %+v", m.Counters)
	}
	if m := measured(before, before, nil); m.AvgNs != 0 || len(m.Counters) != 0 {
		t.Errorf("no runs: %+v", m)
	}
}

func TestWriteText(t *testing.T) {
	r := &Report{
		Program:    Target{ID: 7, Type: "Kprobe", Name: "p0", Attach: []string{"kprobe:vfs_read"}, Owners: []string{"gtrace[42]"}},
		DurationNs: 2e9,
		Kernel:     runs(4, 1200),
	}
	fallback := *r
	fallback.FentryUnavailable = "the kernel refused the gtrace_prof_in program on f: operation not permitted"
	fallback.NoPMUReason = "perf_event_open cycles: no such file or directory"
	fallback.StatsWereOn = true
	withFentry := *r
	withFentry.HardwarePMU = true
	withFentry.Fentry = &Measured{Runs: runs(4, 800), Counters: []Count{{Name: "cycles", Total: 4000, PerRun: 1000}}}
	withFentry.Profiler = &Runs{RunCnt: 4, RunTimeNs: 240, AvgNs: 60}
	tests := []struct {
		name string
		r    *Report
		want string
	}{
		{"fallback", &fallback, `Program 7: Kprobe p0, attached to kprobe:vfs_read, held by gtrace[42]
Window: 2s
fentry/fexit unavailable: the kernel refused the gtrace_prof_in program on f: operation not permitted; showing the kernel's run_cnt and run_time_ns only
No hardware PMU (perf_event_open cycles: no such file or directory): cycles, instructions and LLC misses cannot be counted

                                  RUN_CNT    RUN_TIME_NS     AVG_NS
kernel statistics                       4           1200        300

Note: BPF statistics were already on before gtrace prof started
`},
		{"fentry", &withFentry, `Program 7: Kprobe p0, attached to kprobe:vfs_read, held by gtrace[42]
Window: 2s

                                  RUN_CNT    RUN_TIME_NS     AVG_NS
fentry/fexit (entry to exit)            4            800        200
kernel statistics                       4           1200        300
  of which fentry+fexit                 4            240         60

COUNTER                             TOTAL        PER_RUN
cycles                               4000         1000.0
`},
	}
	for _, tc := range tests {
		var b strings.Builder
		if err := tc.r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, b.String(), tc.want)
		}
	}
}

package bpfprof

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"gtrace/bpfstat"
)

// Report is what a profile found.
type Report struct {
	Program    Target `json:"program"`
	DurationNs int64  `json:"duration_ns"`
	// Fentry is what the fentry and fexit programs measured; nil when
	// they could not attach, for the reason in FentryUnavailable.
	Fentry            *Measured `json:"fentry,omitempty"`
	FentryUnavailable string    `json:"fentry_unavailable,omitempty"`
	// Kernel is the kernel's own run_cnt and run_time_ns over the window.
	// With fentry and fexit attached, its time includes theirs.
	Kernel Runs `json:"kernel"`
	// Profiler is the kernel's statistics of the fentry and fexit
	// programs themselves over the window: their runs per profiled run,
	// and the time of both.
	Profiler    *Runs `json:"profiler,omitempty"`
	StatsWereOn bool  `json:"stats_were_on"`
	// HardwarePMU says whether cycles, instructions and LLC misses can
	// be counted; NoPMUReason says why not.
	HardwarePMU bool     `json:"hardware_pmu"`
	NoPMUReason string   `json:"no_pmu_reason,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// Target is the profiled program.
type Target struct {
	ID     uint32   `json:"id"`
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	Attach []string `json:"attach"`
	Owners []string `json:"owners"`
}

func target(p bpfstat.Program) Target {
	return Target{ID: p.ID, Type: p.Type, Name: p.Name, Attach: p.Attach, Owners: p.Owners}
}

// Runs are a run count and the time the runs took.
type Runs struct {
	RunCnt    uint64 `json:"run_cnt"`
	RunTimeNs uint64 `json:"run_time_ns"`
	AvgNs     uint64 `json:"avg_ns"`
}

func runs(n, ns uint64) Runs {
	r := Runs{RunCnt: n, RunTimeNs: ns}
	if n > 0 {
		r.AvgNs = ns / n
	}
	return r
}

// Measured is what fentry and fexit measured: runs timed from entry to
// exit, and each perf counter's change over them.
type Measured struct {
	Runs
	Counters []Count `json:"counters"`
}

// Count is a perf counter summed over the runs, scaled up where the
// counter was multiplexed and ran for part of the time only.
type Count struct {
	Name   string  `json:"name"`
	Total  uint64  `json:"total"`
	PerRun float64 `json:"per_run"`
}

func measured(before, after totals, names []string) *Measured {
	m := &Measured{Runs: runs(after.Runs-before.Runs, after.TimeNs-before.TimeNs), Counters: []Count{}}
	for i, name := range names {
		a, b := after.Counters[i], before.Counters[i]
		c := Count{Name: name, Total: scale(a.Counter-b.Counter, a.Enabled-b.Enabled, a.Running-b.Running)}
		if m.RunCnt > 0 {
			c.PerRun = float64(c.Total) / float64(m.RunCnt)
		}
		m.Counters = append(m.Counters, c)
	}
	return m
}

// scale estimates a multiplexed counter's full count, as perf does.
func scale(counter, enabled, running uint64) uint64 {
	if running == 0 || running >= enabled {
		return counter
	}
	return uint64(float64(counter) * float64(enabled) / float64(running))
}

// WriteJSON writes the report as one JSON record.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(struct {
		Type string  `json:"type"`
		Data *Report `json:"data"`
	}{"prof", r})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := r.Program
	fmt.Fprintf(&b, "Program %d: %s %s", p.ID, p.Type, p.Name)
	if len(p.Attach) > 0 {
		fmt.Fprintf(&b, ", attached to %s", strings.Join(p.Attach, ", "))
	}
	if len(p.Owners) > 0 {
		fmt.Fprintf(&b, ", held by %s", strings.Join(p.Owners, ", "))
	}
	fmt.Fprintf(&b, "\nWindow: %v\n", time.Duration(r.DurationNs).Round(time.Millisecond))
	if r.FentryUnavailable != "" {
		fmt.Fprintf(&b, "fentry/fexit unavailable: %s; showing the kernel's run_cnt and run_time_ns only\n", r.FentryUnavailable)
	}
	if !r.HardwarePMU {
		fmt.Fprintf(&b, "No hardware PMU (%s): cycles, instructions and LLC misses cannot be counted\n", r.NoPMUReason)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	fmt.Fprintf(&b, "\n%-28s %12s %14s %10s\n", "", "RUN_CNT", "RUN_TIME_NS", "AVG_NS")
	if m := r.Fentry; m != nil {
		fmt.Fprintf(&b, "%-28s %12d %14d %10d\n", "fentry/fexit (entry to exit)", m.RunCnt, m.RunTimeNs, m.AvgNs)
	}
	fmt.Fprintf(&b, "%-28s %12d %14d %10d\n", "kernel statistics", r.Kernel.RunCnt, r.Kernel.RunTimeNs, r.Kernel.AvgNs)
	if p := r.Profiler; p != nil {
		fmt.Fprintf(&b, "%-28s %12d %14d %10d\n", "  of which fentry+fexit", p.RunCnt, p.RunTimeNs, p.AvgNs)
	}
	if m := r.Fentry; m != nil && len(m.Counters) > 0 {
		fmt.Fprintf(&b, "\n%-28s %12s %14s\n", "COUNTER", "TOTAL", "PER_RUN")
		for _, c := range m.Counters {
			fmt.Fprintf(&b, "%-28s %12d %14.1f\n", c.Name, c.Total, c.PerRun)
		}
	}
	if r.StatsWereOn {
		b.WriteString("\nNote: BPF statistics were already on before gtrace prof started\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

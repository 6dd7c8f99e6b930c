package output

import (
	"fmt"
	"strconv"
	"strings"
)

// ProbeStat is what one probe's program cost while tracing, by the
// kernel's own accounting.
type ProbeStat struct {
	Probe   string
	Runs    uint64
	TotalNs uint64
	// Missed counts hits that did not run the program: recursion, and
	// kprobe misses the kernel reports.
	Missed uint64
}

// avgNs is the mean run time, 0 for a probe that never ran.
func (s ProbeStat) avgNs() uint64 {
	if s.Runs == 0 {
		return 0
	}
	return s.TotalNs / s.Runs
}

// Stats prints --stats in text: one row per probe, then the events lost.
func (t *Text) Stats(stats []ProbeStat, lost uint64) error {
	width := len("PROBE")
	for _, s := range stats {
		width = max(width, len(s.Probe))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s %12s %14s %10s %8s\n", width, "PROBE", "RUNS", "TOTAL_NS", "AVG_NS", "MISSED")
	for _, s := range stats {
		fmt.Fprintf(&b, "%-*s %12d %14d %10d %8d\n", width, s.Probe, s.Runs, s.TotalNs, s.avgNs(), s.Missed)
	}
	fmt.Fprintf(&b, "lost events: %d\n", lost)
	return write(t.out, b.String())
}

// Stats prints --stats as one JSON record.
func (j *JSON) Stats(stats []ProbeStat, lost uint64) error {
	var b strings.Builder
	b.WriteString(`{"type": "stats", "data": {"probes": [`)
	for i, s := range stats {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"probe": `)
		writeJSONString(&b, s.Probe)
		b.WriteString(`, "runs": ` + strconv.FormatUint(s.Runs, 10) +
			`, "total_ns": ` + strconv.FormatUint(s.TotalNs, 10) +
			`, "avg_ns": ` + strconv.FormatUint(s.avgNs(), 10) +
			`, "missed": ` + strconv.FormatUint(s.Missed, 10) + "}")
	}
	b.WriteString(`], "lost_events": ` + strconv.FormatUint(lost, 10) + "}}\n")
	return write(j.out, b.String())
}

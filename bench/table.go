package bench

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Unit says what a row's values measure, and so how they print.
type Unit int

const (
	Duration   Unit = iota // nanoseconds of wall time
	Bytes                  // bytes of memory
	NsPerEvent             // nanoseconds of BPF run time per event
)

// Row is one figure, measured for both tracers. A value of 0 was not
// measured.
type Row struct {
	Figure   string
	Target   string // gtrace's target, if it has one
	Unit     Unit
	Gtrace   float64
	Bpftrace float64 // or the figure of the tracer Versus names
	// Versus names the tracer gtrace is measured against, when it is
	// not bpftrace: the Bpftrace field holds its figure.
	Versus string
}

// WriteTable prints rows as Markdown tables, one for each tracer gtrace
// is measured against (bpftrace's first), in the order of their first
// rows, with the ratio of its figure to gtrace's: how many times faster
// or smaller gtrace is.
func WriteTable(w io.Writer, rows []Row) error {
	var versus []string
	for _, r := range rows {
		if !slices.Contains(versus, r.Versus) {
			versus = append(versus, r.Versus)
		}
	}
	for i, v := range versus {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeTable(w, v, slices.DeleteFunc(slices.Clone(rows), func(r Row) bool { return r.Versus != v })); err != nil {
			return err
		}
	}
	return nil
}

// writeTable prints the rows measured against the tracer versus.
func writeTable(w io.Writer, versus string, rows []Row) error {
	if versus == "" {
		versus = "bpftrace"
	}
	if _, err := fmt.Fprintf(w, "| figure | target | gtrace | %[1]s | %[1]s / gtrace |\n"+
		"| --- | --- | ---: | ---: | ---: |\n", versus); err != nil {
		return err
	}
	for _, r := range rows {
		ratio := "—"
		if r.Gtrace > 0 && r.Bpftrace > 0 {
			ratio = formatRatio(r.Bpftrace / r.Gtrace)
		}
		target := r.Target
		if target == "" {
			target = "—"
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Figure, target,
			r.Unit.format(r.Gtrace), r.Unit.format(r.Bpftrace), ratio); err != nil {
			return err
		}
	}
	return nil
}

func (u Unit) format(v float64) string {
	if v == 0 {
		return "—"
	}
	switch u {
	case Duration:
		switch d := time.Duration(v); {
		case d < 10*time.Millisecond:
			return fmt.Sprintf("%.2f ms", v/1e6)
		case d < time.Second:
			return fmt.Sprintf("%.1f ms", v/1e6)
		default:
			return fmt.Sprintf("%.2f s", v/1e9)
		}
	case Bytes:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	default:
		return fmt.Sprintf("%.0f ns", v)
	}
}

func formatRatio(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

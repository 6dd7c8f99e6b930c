package bench

import (
	"fmt"
	"io"
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
	Bpftrace float64
}

// WriteTable prints rows as a Markdown table, with the ratio bpftrace /
// gtrace: how many times faster or smaller gtrace is.
func WriteTable(w io.Writer, rows []Row) error {
	if _, err := fmt.Fprint(w, "| figure | target | gtrace | bpftrace | bpftrace / gtrace |\n"+
		"| --- | --- | ---: | ---: | ---: |\n"); err != nil {
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

package calltrace

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteText prints r as uftrace's replay does, one block per track: a
// call that made calls opens a brace and closes it with its duration, a
// call that made none is one line with its duration. Each line also says
// when (µs from the track's first call), on which CPU and thread. The
// object's fields follow a call's entry when they changed since the
// track's previous call.
func (r *Recording) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, t := range r.Tracks {
		if i > 0 {
			b.WriteByte('\n')
		}
		calls := 0
		t.Walk(func(*Call, int) { calls++ })
		var first uint64
		if len(t.Calls) > 0 {
			first = t.Calls[0].Entry
		}
		fmt.Fprintf(&b, "%s: %d calls, %s\n", t.Name, calls, formatDuration(t.End()-first))
		fmt.Fprintf(&b, "%12s %3s %7s %-16s %12s  %s\n", "TIME(us)", "CPU", "TID", "COMM", "DURATION", "FUNCTION")
		var lastFields []string
		var write func(c *Call, depth int)
		write = func(c *Call, depth int) {
			indent := strings.Repeat("  ", depth)
			at := fmt.Sprintf("%12.3f %3d %7d %-16s", float64(c.Entry-first)/1000, c.CPU, c.Tid, c.Comm)
			fields := ""
			if len(c.Fields) > 0 && !slices.Equal(c.Fields, lastFields) {
				fields = "  " + r.formatFields(c.Fields)
				lastFields = c.Fields
			}
			if len(c.Calls) == 0 {
				fmt.Fprintf(&b, "%s %12s  %s%s();%s\n", at, durationOf(c), indent, c.Func, fields)
				return
			}
			fmt.Fprintf(&b, "%s %12s  %s%s() {%s\n", at, "", indent, c.Func, fields)
			for _, in := range c.Calls {
				write(in, depth+1)
			}
			end := fmt.Sprintf("%12s %3s %7s %-16s", "", "", "", "")
			fmt.Fprintf(&b, "%s %12s  %s} /* %s */\n", end, durationOf(c), indent, c.Func)
		}
		for _, c := range t.Calls {
			write(c, 0)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Recording) formatFields(values []string) string {
	parts := make([]string, 0, len(values))
	for i, v := range values {
		if i < len(r.Fields) {
			parts = append(parts, r.Fields[i]+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// durationOf is a call's duration as uftrace prints it, or "-" when its
// return was not seen.
func durationOf(c *Call) string {
	if c.Exit == 0 {
		return "-"
	}
	return formatDuration(c.Exit - c.Entry)
}

// formatDuration prints ns in the unit uftrace picks: us below a second's
// thousandth, then ms, then s, three decimals.
func formatDuration(ns uint64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.3f us", float64(ns)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.3f s", float64(ns)/1e9)
}

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// point returns the point of a script and tracer, and whether there is one.
func (r *OverheadResult) point(script int, tracer string) (Point, bool) {
	for _, p := range r.Points {
		if p.Script == script && p.Tracer == tracer {
			return p, true
		}
	}
	return Point{}, false
}

// scripts lists the scripts measured, in order.
func (r *OverheadResult) scripts() []Point {
	var out []Point
	for _, p := range r.Points {
		if len(out) == 0 || out[len(out)-1].Script != p.Script {
			out = append(out, p)
		}
	}
	return out
}

// ratio formats a/b, or a dash where either is no cost at all: a point
// within noise of the untraced workload, or a control that runs nothing.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// ns formats a cost per event; the whole cost of a cheap probe can come
// out below the untraced workload's, within its noise.
func ns(v float64) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", v)
}

// WriteOverheadTable prints r as a table: per script and tracer, the
// whole and in-kernel cost per event, each also as a ratio to the floor
// and to the first tracer after it; then the event rates of the printf
// script, where events are lost first.
func WriteOverheadTable(w io.Writer, r *OverheadResult) error {
	on := "syscalls:sys_enter_read and sys_exit_read in place of vfs_read (--kprobes: vfs_read)"
	if r.Kprobes {
		on = "kprobes on vfs_read"
	}
	fmt.Fprintf(w, "Overhead per event: dd if=/dev/zero of=/dev/null bs=1 count=%d, best of %d runs\n", r.Events, r.Runs)
	fmt.Fprintf(w, "%s, Linux %s, %d CPUs; %s\n", r.Date, r.Kernel, r.CPUs, on)
	fmt.Fprintf(w, "untraced: %.0f ns per event; whole: extra wall time of the traced workload per event; "+
		"in-kernel: run_time_ns / run_cnt\n\n", r.BaselineNs)
	ref := ""
	if len(r.Tracers) > 1 {
		ref = r.Tracers[1]
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "#\tscript\ttracer\twhole ns\tslowdown\t/ floor\t/ %s\tin-kernel ns\t/ floor\t/ %s\tlost\t\n", ref, ref)
	for _, s := range r.scripts() {
		fl, _ := r.point(s.Script, FloorName)
		rf, _ := r.point(s.Script, ref)
		for _, t := range r.Tracers {
			p, _ := r.point(s.Script, t)
			fmt.Fprintf(tw, "%02d\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t%s\t%s\t%s\t%d\t\n",
				p.Script, p.Name, p.Tracer, ns(p.WholeNs), 100*p.Slowdown,
				ratio(p.WholeNs, fl.WholeNs), ratio(p.WholeNs, rf.WholeNs),
				ns(p.KernelNs), ratio(p.KernelNs, fl.KernelNs), ratio(p.KernelNs, rf.KernelNs), p.Lost)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range r.Tracers {
		p, ok := r.point(18, t)
		if !ok {
			break
		}
		if p.Lost == 0 {
			fmt.Fprintf(w, "\nprintf, %s: no event lost at %.0f events/s", t, p.EventRate)
		} else {
			fmt.Fprintf(w, "\nprintf, %s: %d events lost at %.0f events/s: loss begins at or below that rate", t, p.Lost, p.EventRate)
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteJSON prints a result of Overhead or Attach as one JSON object.
func WriteJSON(w io.Writer, result any) error {
	b, err := json.MarshalIndent(result, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// tracerColors are the bars' colours, by tracer order: the floor first.
var tracerColors = []string{"#7f7f7f", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b"}

// WriteOverheadSVG draws r as two bar charts, as the study draws its
// results: the whole and the in-kernel cost per event, a group of bars
// per script and a bar per tracer, on a log scale that keeps 50 ns and
// 10 µs on one page.
func WriteOverheadSVG(w io.Writer, r *OverheadResult) error {
	const (
		left, top, panelH, gap, barW = 70, 40, 260, 130, 9
	)
	scripts := r.scripts()
	groupW := barW*len(r.Tracers) + 12
	width := left + groupW*len(scripts) + 20
	height := top + 2*(panelH+gap) + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="13">Per-event cost, dd bs=1 count=%d, best of %d runs (%s, Linux %s)</text>`+"\n",
		left, r.Events, r.Runs, r.Date, xmlEscape(r.Kernel))
	for i, t := range r.Tracers {
		x := left + 300 + i*90
		fmt.Fprintf(&b, `<rect x="%d" y="26" width="10" height="10" fill="%s"/><text x="%d" y="35">%s</text>`+"\n",
			x, tracerColors[i%len(tracerColors)], x+14, xmlEscape(t))
	}
	panels := []struct {
		title string
		value func(Point) float64
	}{
		{"whole: extra wall time per event (ns)", func(p Point) float64 { return p.WholeNs }},
		{"in-kernel: run_time_ns / run_cnt (ns)", func(p Point) float64 { return p.KernelNs }},
	}
	for k, panel := range panels {
		y0 := top + 20 + k*(panelH+gap) // the panel's top
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12">%s</text>`+"\n", left, y0-6, panel.title)
		// Decades from 1 ns to 100 µs.
		const decades = 5
		scale := func(v float64) float64 {
			if v < 1 {
				v = 1
			}
			return float64(panelH) * min(math.Log10(v), decades) / decades
		}
		for d := 0; d <= decades; d++ {
			y := float64(y0+panelH) - scale(math.Pow10(d))
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
				left, y, width-20, y, left-6, y+4, decadeLabel(d))
		}
		for g, s := range scripts {
			gx := left + 6 + g*groupW
			for i, t := range r.Tracers {
				p, _ := r.point(s.Script, t)
				v := panel.value(p)
				if v <= 0 {
					continue
				}
				h := scale(v)
				fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%02d %s, %s: %.0f ns</title></rect>`+"\n",
					gx+i*barW, float64(y0+panelH)-h, barW-1, h, tracerColors[i%len(tracerColors)],
					s.Script, xmlEscape(s.Name), xmlEscape(t), v)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" transform="rotate(-45 %d %d)">%02d %s</text>`+"\n",
				gx+groupW/2, y0+panelH+14, gx+groupW/2, y0+panelH+14, s.Script, xmlEscape(s.Name))
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, y0+panelH, width-20, y0+panelH)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func decadeLabel(d int) string {
	return []string{"1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs"}[d]
}

var xmlEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace

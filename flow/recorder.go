package flow

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"gtrace/calltrace"
	"gtrace/kernel"
	"gtrace/output"
)

// The kinds of event, the first element of each tuple the script sends.
const (
	syscallEntry = iota
	syscallReturn
	funcEntry
	funcReturn
)

// Recorder is the printer of a flow's events: it prints each as a line
// of Lines, if set, and records them.
type Recorder struct {
	// Lines, if not nil, gets a line per event, DTrace's flowindent.
	Lines io.Writer
	// Stderr gets the count of lost events.
	Stderr io.Writer
	// Forget drops each system call from the recording once it has
	// returned, for a flow printed only as lines: a long flow then
	// holds only the calls under way.
	Forget bool

	rec      *calltrace.Recording
	builder  *calltrace.Builder
	tracks   map[int]*calltrace.Track // by thread ID
	syscalls map[int]string
	header   bool
}

// NewRecorder returns a Recorder that prints lines to lines (nil for
// none) and lost events to stderr.
func NewRecorder(lines, stderr io.Writer) *Recorder {
	rec := &calltrace.Recording{Command: "flow"}
	return &Recorder{Lines: lines, Stderr: stderr, rec: rec, builder: calltrace.NewBuilder(rec),
		tracks: map[int]*calltrace.Track{}, syscalls: kernel.SyscallNames()}
}

// Recording returns what was recorded: a track per thread, its system
// calls the outermost calls.
func (r *Recorder) Recording() *calltrace.Recording { return r.rec }

// Value takes one event of the script.
func (r *Recorder) Value(v output.Value) error {
	elems := v.Elems()
	if len(elems) < 5 {
		return fmt.Errorf("flow event %s: want at least 5 elements", v)
	}
	var nums [4]uint64
	for i := range nums {
		n, ok := elems[i].Number()
		if !ok {
			return fmt.Errorf("flow event %s: element %d is not a number", v, i)
		}
		nums[i] = n
	}
	kind, ts, cpu, tid := nums[0], nums[1], int(nums[2]), int(nums[3])
	name := elems[4].String()
	if kind == syscallEntry || kind == syscallReturn {
		name = r.syscallName(elems[4])
	}
	t := r.tracks[tid]
	if t == nil {
		if kind != syscallEntry {
			// The flag of a system call entered before tracing
			// began: nothing to nest it in.
			return nil
		}
		comm := ""
		if len(elems) > 6 {
			comm = elems[6].String()
		}
		t = r.builder.Track(fmt.Sprintf("%s %d", comm, tid))
		r.tracks[tid] = t
	}
	switch kind {
	case syscallEntry, funcEntry:
		c := &calltrace.Call{Func: name, Entry: ts, CPU: cpu, Tid: tid}
		if kind == syscallEntry && len(elems) > 6 {
			pid, _ := elems[5].Number()
			c.Pid, c.Comm = int(pid), elems[6].String()
		} else if open := t.Calls; len(open) > 0 {
			c.Pid, c.Comm = open[len(open)-1].Pid, open[len(open)-1].Comm
		}
		r.line(cpu, tid, "", r.builder.Depth(t, tid), arrow(kind), name)
		r.builder.Enter(t, c)
	case syscallReturn, funcReturn:
		c := r.builder.Return(t, tid, name, ts)
		if c == nil {
			return nil // its entry was not seen
		}
		depth := r.builder.Depth(t, tid)
		r.line(cpu, tid, formatDuration(c.Duration()), depth, arrow(kind), name)
		if r.Forget && depth == 0 {
			t.Calls = nil
		}
	default:
		return fmt.Errorf("flow event %s: unknown kind %d", v, kind)
	}
	return nil
}

// syscallName names the system call numbered v.
func (r *Recorder) syscallName(v output.Value) string {
	n, _ := v.Number()
	if name, ok := r.syscalls[int(n)]; ok {
		return name
	}
	return fmt.Sprintf("syscall_%d", n)
}

// arrow marks an event as DTrace's flowindent does, with => and <= for
// the system calls, as bpftrace's ktrace.bt does.
func arrow(kind uint64) string {
	return [...]string{"=>", "<=", "->", "<-"}[kind]
}

// line prints one event, after the header if it is the first.
func (r *Recorder) line(cpu, tid int, took string, depth int, arrow, name string) {
	if r.Lines == nil {
		return
	}
	if !r.header {
		writeHeader(r.Lines)
		r.header = true
	}
	writeLine(r.Lines, cpu, tid, took, depth, arrow, name)
}

func writeHeader(w io.Writer) {
	fmt.Fprintf(w, "%3s %7s %12s  %s\n", "CPU", "TID", "DURATION", "FUNCTION")
}

// writeLine prints one event: its CPU, thread, the time a return took,
// and the function, indented two spaces a level.
func writeLine(w io.Writer, cpu, tid int, took string, depth int, arrow, name string) {
	fmt.Fprintf(w, "%3d %7d %12s  %s%s %s\n", cpu, tid, took, strings.Repeat("  ", depth), arrow, name)
}

// WriteFlow prints a recording as the Recorder prints the events as they
// come, a track after another: a line per entry and per return, the
// outermost calls as system calls. A return shows the CPU of its entry,
// the only one a recording keeps; one not seen shows "-" for its time.
func WriteFlow(w io.Writer, rec *calltrace.Recording) error {
	bw := bufio.NewWriter(w)
	writeHeader(bw)
	for _, t := range rec.Tracks {
		var write func(c *calltrace.Call, depth int)
		write = func(c *calltrace.Call, depth int) {
			in, out := arrow(funcEntry), arrow(funcReturn)
			if depth == 0 {
				in, out = arrow(syscallEntry), arrow(syscallReturn)
			}
			writeLine(bw, c.CPU, c.Tid, "", depth, in, c.Func)
			for _, inner := range c.Calls {
				write(inner, depth+1)
			}
			took := "-"
			if c.Exit != 0 {
				took = formatDuration(c.Duration())
			}
			writeLine(bw, c.CPU, c.Tid, took, depth, out, c.Func)
		}
		for _, c := range t.Calls {
			write(c, 0)
		}
	}
	return bw.Flush()
}

// formatDuration prints d as uftrace does: in µs below a millisecond,
// then ms, then s, three decimals.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.3f us", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

// LostEvents reports events the ring buffer had no room for: the flow
// misses calls.
func (r *Recorder) LostEvents(n uint64) error {
	_, err := fmt.Fprintf(r.Stderr, "WARNING: %d events lost: the flow misses calls\n", n)
	return err
}

// The script prints nothing else; the rest of output.Printer is
// ignored.

func (r *Recorder) Map(*output.Map, int, uint32) error                            { return nil }
func (r *Recorder) Printf(string) error                                           { return nil }
func (r *Recorder) Time(string) error                                             { return nil }
func (r *Recorder) Cat(string) error                                              { return nil }
func (r *Recorder) Join(string) error                                             { return nil }
func (r *Recorder) Syscall(string) error                                          { return nil }
func (r *Recorder) Stats([]output.ProbeStat, uint64) error                        { return nil }
func (r *Recorder) AttachedProbes(uint64) error                                   { return nil }
func (r *Recorder) HelperError(*output.HelperError) error                         { return nil }
func (r *Recorder) BenchResult([]string, int, time.Duration, uint64) error        { return nil }
func (r *Recorder) TestResult([]string, int, time.Duration, []bool, string) error { return nil }
func (r *Recorder) End() error                                                    { return nil }

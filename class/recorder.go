package class

import (
	"fmt"
	"slices"
	"strings"

	"gtrace/calltrace"
	"gtrace/output"
)

// Recorder is the output.Printer of a class program: it keeps the
// events the program sends and, at the end, nests them into one track
// per object life. Messages a class program does not send go on to the
// printer it wraps.
type Recorder struct {
	output.Printer
	events []event
	// bad counts events of a shape the program does not send.
	bad int
}

// event is one entry or exit, as Generate's program sends it.
type event struct {
	kind     int
	fn       string
	addr     uint64
	new      bool
	tid, pid int
	cpu      int
	comm     string
	ts       uint64
	fields   []string
}

// NewRecorder records events, and passes other output on to p.
func NewRecorder(p output.Printer) *Recorder {
	return &Recorder{Printer: p}
}

// Value keeps one event.
func (r *Recorder) Value(v output.Value) error {
	e, ok := parseEvent(v)
	if !ok {
		r.bad++
		return nil
	}
	r.events = append(r.events, e)
	return nil
}

// Map prints nothing: a class program's maps are its bookkeeping.
func (r *Recorder) Map(*output.Map, int, uint32) error { return nil }

// End prints nothing: the recording is printed after the run.
func (r *Recorder) End() error { return nil }

// Events is the number of events recorded.
func (r *Recorder) Events() int { return len(r.events) }

func parseEvent(v output.Value) (event, bool) {
	elems := v.Elems()
	num := func(i int) uint64 {
		n, _ := elems[i].Number()
		return n
	}
	if len(elems) < 4 {
		return event{}, false
	}
	e := event{kind: int(num(0)), fn: funcName(elems[1].String())}
	switch {
	case (e.kind == eventExit || e.kind == eventInner) && len(elems) == 4:
		e.tid, e.ts = int(num(2)), num(3)
	case e.kind == eventEntry && len(elems) >= 9:
		e.addr, e.new = num(2), num(3) != 0
		e.tid, e.pid, e.cpu = int(num(4)), int(num(5)), int(num(6))
		e.comm, e.ts = elems[7].String(), num(8)
		for _, f := range elems[9:] {
			e.fields = append(e.fields, f.String())
		}
	default:
		return event{}, false
	}
	return e, true
}

// funcName is the function of a probe's name: kprobe:submit_bio is
// submit_bio, kretprobe:nvme:nvme_queue_rq is nvme:nvme_queue_rq.
func funcName(probe string) string {
	for _, prefix := range []string{"kprobe:", "kretprobe:"} {
		if fn, ok := strings.CutPrefix(probe, prefix); ok {
			return fn
		}
	}
	return probe
}

// Recording nests the events into tracks, one per life of an object,
// in the order the lives began.
func (r *Recorder) Recording(structName string, fields []string) *calltrace.Recording {
	rec := &calltrace.Recording{Command: "class", Struct: structName, Fields: fields}
	b := calltrace.NewBuilder(rec)
	// The ring buffer is shared by the CPUs: order the events by time,
	// keeping the order of a thread's events at the same time.
	events := slices.Clone(r.events)
	slices.SortStableFunc(events, func(a, b event) int {
		switch {
		case a.ts < b.ts:
			return -1
		case a.ts > b.ts:
			return 1
		}
		return 0
	})
	live := map[uint64]*calltrace.Track{}
	lives := map[uint64]int{}
	// open holds each thread's calls not yet returned, over all tracks,
	// innermost last, with a nil track for inner calls on objects not
	// followed: an exit carries no object.
	type openCall struct {
		track *calltrace.Track
		fn    string
	}
	open := map[int][]openCall{}
	for _, e := range events {
		if e.kind == eventInner {
			open[e.tid] = append(open[e.tid], openCall{nil, e.fn})
			continue
		}
		if e.kind == eventExit {
			stack := open[e.tid]
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].fn == e.fn {
					if stack[i].track != nil {
						b.Exit(stack[i].track, e.tid, e.fn, e.ts)
					}
					open[e.tid] = stack[:i]
					break
				}
			}
			continue
		}
		t := live[e.addr]
		if e.new || t == nil {
			lives[e.addr]++
			t = b.Track(fmt.Sprintf("%s %#x #%d", structName, e.addr, lives[e.addr]))
			live[e.addr] = t
		}
		b.Enter(t, &calltrace.Call{Func: e.fn, Entry: e.ts, CPU: e.cpu, Pid: e.pid, Tid: e.tid,
			Comm: e.comm, Fields: e.fields})
		open[e.tid] = append(open[e.tid], openCall{t, e.fn})
	}
	return rec
}

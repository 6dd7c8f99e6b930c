package calltrace

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// ReadChrome reads a recording that WriteChrome wrote. It checks the
// file as Check does.
func ReadChrome(rd io.Reader) (*Recording, error) {
	var f chromeFile
	if err := json.NewDecoder(rd).Decode(&f); err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	if err := check(&f); err != nil {
		return nil, err
	}
	r := &Recording{Command: f.OtherData.Command, Struct: f.OtherData.Struct,
		Fields: f.OtherData.Fields, Start: f.OtherData.StartNs}
	if r.Start > math.MaxUint64-maxMicros*1000 {
		return nil, fmt.Errorf("read trace: otherData.start_ns %d is too late for a recording", r.Start)
	}
	// A return at time 0 would read as one never seen (Call.Exit): a
	// file that gives no start, which gtrace's always do, starts at 1 ns.
	r.Start = max(r.Start, 1)
	tracks := map[int]*Track{}
	track := func(pid int) *Track {
		t := tracks[pid]
		if t == nil {
			t = &Track{ID: pid}
			tracks[pid] = t
		}
		return t
	}
	b := NewBuilder(r)
	for _, e := range f.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "process_name" {
				name, _ := e.Args["name"].(string)
				track(e.Pid).Name = name
			}
		case "B":
			c := &Call{Func: e.Name, Entry: nanos(e.Ts, r.Start), Tid: e.Tid}
			c.CPU = intArg(e.Args["cpu"])
			c.Pid = intArg(e.Args["pid"])
			c.Comm, _ = e.Args["comm"].(string)
			if fields, ok := e.Args["fields"].(map[string]any); ok {
				for _, name := range r.Fields {
					v, _ := fields[name].(string)
					c.Fields = append(c.Fields, v)
				}
			}
			b.Enter(track(e.Pid), c)
		case "E":
			if unfinished, _ := e.Args["unfinished"].(bool); unfinished {
				b.Exit(track(e.Pid), e.Tid, e.Name, 0)
				continue
			}
			b.Exit(track(e.Pid), e.Tid, e.Name, nanos(e.Ts, r.Start))
		}
	}
	r.Start = max(f.OtherData.StartNs, 1) // Enter lowered it to the first entry
	r.Tracks = r.Tracks[:0]
	for _, t := range tracks {
		r.Tracks = append(r.Tracks, t)
	}
	sort.Slice(r.Tracks, func(i, j int) bool { return r.Tracks[i].ID < r.Tracks[j].ID })
	return r, nil
}

// nanos turns a ts in microseconds back into ns from start.
func nanos(ts json.Number, start uint64) uint64 {
	us, _ := ts.Float64()
	return start + uint64(math.Round(us*1000))
}

func intArg(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// maxMicros bounds a file's times, in µs, so that they convert to ns
// after the recording's start without overflow: a century.
const maxMicros = 100 * 365 * 24 * 3600 * 1e6

// Check verifies what the Chrome Trace Event format requires of a file
// of duration events: every B has its E, with the same name, on the same
// pid and tid; they nest properly; and each lane's times never go back.
func Check(rd io.Reader) error {
	var f chromeFile
	if err := json.NewDecoder(rd).Decode(&f); err != nil {
		return fmt.Errorf("read trace: %w", err)
	}
	return check(&f)
}

func check(f *chromeFile) error {
	type lane struct{ pid, tid int }
	open := map[lane][]string{}
	last := map[lane]float64{}
	for i, e := range f.TraceEvents {
		l := lane{e.Pid, e.Tid}
		ts, err := e.Ts.Float64()
		if err != nil {
			return fmt.Errorf("event %d: ts %q: %w", i, e.Ts, err)
		}
		if ts < 0 || ts > maxMicros {
			return fmt.Errorf("event %d: ts %s is not a time of a recording: from 0 to %g µs", i, e.Ts, float64(maxMicros))
		}
		switch e.Ph {
		case "M":
			continue
		case "B", "E":
		default:
			return fmt.Errorf("event %d: phase %q is not one gtrace writes", i, e.Ph)
		}
		if prev, ok := last[l]; ok && ts < prev {
			return fmt.Errorf("event %d (%s %s, pid %d tid %d): ts %s goes back from %g", i, e.Ph, e.Name, e.Pid, e.Tid, e.Ts, prev)
		}
		last[l] = ts
		if e.Ph == "B" {
			open[l] = append(open[l], e.Name)
			continue
		}
		stack := open[l]
		if len(stack) == 0 {
			return fmt.Errorf("event %d: E of %s on pid %d tid %d has no B", i, e.Name, e.Pid, e.Tid)
		}
		if top := stack[len(stack)-1]; top != e.Name {
			return fmt.Errorf("event %d: E of %s on pid %d tid %d, but %s is the innermost open B", i, e.Name, e.Pid, e.Tid, top)
		}
		open[l] = stack[:len(stack)-1]
	}
	for l, stack := range open {
		if len(stack) > 0 {
			return fmt.Errorf("B of %s on pid %d tid %d has no E", stack[len(stack)-1], l.pid, l.tid)
		}
	}
	return nil
}

package calltrace

import "time"

// Recording is a set of tracks of recorded calls.
type Recording struct {
	// Command is what recorded it: "class" or "flow".
	Command string
	// Struct is the traced struct of a class recording, such as "bio".
	Struct string
	// Fields names the struct fields recorded at each call, in order.
	Fields []string
	// Start is the time of the first entry, in ns of the clock the
	// calls' times are in.
	Start  uint64
	Tracks []*Track
}

// Track is one object's life (class) or one thread (flow).
type Track struct {
	ID int
	// Name says what the track follows, such as "bio 0xffff8881... #3".
	Name string
	// Calls are the outermost calls, in order of entry; each holds the
	// calls made inside it.
	Calls []*Call
}

// Call is one call of a kernel function.
type Call struct {
	Func string
	// Entry and Exit are times in ns; Exit is 0 when the call's return
	// was not seen.
	Entry, Exit uint64
	CPU         int
	Pid, Tid    int
	Comm        string
	// Fields are the object's fields at entry, in the order of the
	// recording's Fields, as text.
	Fields []string
	// Calls are the calls made inside this one, in order of entry.
	Calls []*Call
}

// Duration is how long the call took, or 0 when its end is unknown.
func (c *Call) Duration() time.Duration {
	if c.Exit < c.Entry {
		return 0
	}
	return time.Duration(c.Exit - c.Entry)
}

// Walk calls f on every call of the track, outer before inner, with its
// depth (0 for the outermost).
func (t *Track) Walk(f func(c *Call, depth int)) {
	var walk func(calls []*Call, depth int)
	walk = func(calls []*Call, depth int) {
		for _, c := range calls {
			f(c, depth)
			walk(c.Calls, depth+1)
		}
	}
	walk(t.Calls, 0)
}

// End is the latest time in the track: the last exit, or entry where no
// exit is later.
func (t *Track) End() uint64 {
	var end uint64
	t.Walk(func(c *Call, _ int) {
		end = max(end, c.Entry, c.Exit)
	})
	return end
}

package calltrace

// Builder nests calls into tracks from entry and exit events, given in
// the order they happened on each thread.
type Builder struct {
	rec *Recording
	// open holds, per track and thread, the calls entered and not yet
	// returned, innermost last.
	open map[laneKey][]*Call
}

type laneKey struct {
	track *Track
	tid   int
}

// NewBuilder builds into rec.
func NewBuilder(rec *Recording) *Builder {
	return &Builder{rec: rec, open: map[laneKey][]*Call{}}
}

// Track starts a new track named name and returns it.
func (b *Builder) Track(name string) *Track {
	t := &Track{ID: len(b.rec.Tracks) + 1, Name: name}
	b.rec.Tracks = append(b.rec.Tracks, t)
	return t
}

// Enter records the entry of c on t: inside the call its thread is in
// on t, if any.
func (b *Builder) Enter(t *Track, c *Call) {
	if b.rec.Start == 0 || c.Entry < b.rec.Start {
		b.rec.Start = c.Entry
	}
	k := laneKey{t, c.Tid}
	stack := b.open[k]
	if n := len(stack); n > 0 {
		stack[n-1].Calls = append(stack[n-1].Calls, c)
	} else {
		t.Calls = append(t.Calls, c)
	}
	b.open[k] = append(stack, c)
}

// Exit records the return of fn on thread tid of t at time ts. Calls
// entered inside it whose own returns were missed are closed as
// unfinished. A return with no matching entry is ignored, and reported
// false: its entry came before tracing began, or was not recorded.
func (b *Builder) Exit(t *Track, tid int, fn string, ts uint64) bool {
	return b.Return(t, tid, fn, ts) != nil
}

// Return is Exit, returning the call that returned, or nil when no entry
// matches.
func (b *Builder) Return(t *Track, tid int, fn string, ts uint64) *Call {
	k := laneKey{t, tid}
	stack := b.open[k]
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].Func == fn {
			c := stack[i]
			c.Exit = ts
			b.open[k] = stack[:i]
			if i == 0 {
				delete(b.open, k)
			}
			return c
		}
	}
	return nil
}

// Depth is the number of calls thread tid of t has entered and not yet
// returned from.
func (b *Builder) Depth(t *Track, tid int) int {
	return len(b.open[laneKey{t, tid}])
}

// Open reports whether t has calls entered and not yet returned.
func (b *Builder) Open(t *Track) bool {
	for k := range b.open {
		if k.track == t {
			return true
		}
	}
	return false
}

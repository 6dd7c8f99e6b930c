package output

import "fmt"

// StackMap is a map whose key holds a kernel or user stack, as samples:
// what folded stacks, flame graphs and pprof profiles are made of.
type StackMap struct {
	Name    string
	Kind    Kind // Count, Sum or Scalar (integers)
	Samples []StackSample
}

// StackSample is one entry of a StackMap.
type StackSample struct {
	// Frames are the key's stacks, root first: the user stack's frames,
	// then the kernel stack's, as a system call is called.
	Frames []Frame
	// Keys are the key's other parts, in key order, and KeyNames their
	// names as the program wrote them ("" where unnamed; nil if unknown).
	Keys     []Value
	KeyNames []string
	Value    int64
}

// unwindFailure is the root frame of a stack that could not be unwound
// all the way.
const unwindFailure = "[unwind failure]"

// StackSamples returns m as samples in the order the text output prints
// it, or nil when m has no entry with a stack in its key. Values must be
// single numbers: count(), sum() or integers.
func StackSamples(m *Map) (*StackMap, error) {
	src := m.source()
	if src.Len() == 0 || !hasStack(src.Entry(0, true).Key) {
		return nil, nil
	}
	if err := checkStackValue(m); err != nil {
		return nil, err
	}
	sm := &StackMap{Name: m.Name, Kind: m.Kind}
	for _, i := range m.order(src, 0) {
		e := src.Entry(int(i), true)
		s := StackSample{Value: int64(e.Value.n)}
		var kernel []Frame
		for j, k := range e.Key {
			switch {
			case k.tag != tagStack:
				s.Keys = append(s.Keys, k)
				if len(m.KeyNames) == len(e.Key) {
					s.KeyNames = append(s.KeyNames, m.KeyNames[j])
				}
			case isKernelStack(k.frames):
				kernel = append(kernel, rootFirst(k.frames)...)
			default:
				s.Frames = append(s.Frames, rootFirst(k.frames)...)
			}
		}
		s.Frames = append(s.Frames, kernel...)
		sm.Samples = append(sm.Samples, s)
	}
	return sm, nil
}

// hasStack says whether a key holds a stack.
func hasStack(key []Value) bool {
	for _, k := range key {
		if k.tag == tagStack {
			return true
		}
	}
	return false
}

// checkStackValue refuses values that are not one number per key: a
// stack's share of a flame graph is a count or a sum.
func checkStackValue(m *Map) error {
	switch m.Kind {
	case Count, Sum:
		return nil
	case Scalar:
		if v := m.source().Entry(0, false).Value; v.tag == tagInt || v.tag == tagUint {
			return nil
		}
		return fmt.Errorf("map %s: its values are not integers; stacks are folded with a count(), sum() or integer value", m.Name)
	}
	return fmt.Errorf("map %s: its %s values are not one number per stack; stacks are folded with a count(), sum() or integer value", m.Name, kindNames[m.Kind])
}

// kindNames name the aggregations that have no single number per key.
var kindNames = map[Kind]string{Min: "min()", Max: "max()", Avg: "avg()", Stats: "stats()",
	Hist: "hist()", LHist: "lhist()", TSeries: "tseries()"}

// isKernelStack says whether frames are a kernel stack; an empty stack
// is neither and adds no frames.
func isKernelStack(frames []Frame) bool { return len(frames) > 0 && frames[0].Kernel }

// rootFirst returns a stack's frames, which come leaf first, root
// first. A stack cut short by an unwind failure keeps the frames before
// it, under a frame that says so.
func rootFirst(frames []Frame) []Frame {
	var out []Frame
	for i, f := range frames {
		if f.Addr == UnwindFailure {
			out = append(out, Frame{Addr: f.Addr, Func: unwindFailure, Kernel: frames[0].Kernel})
			frames = frames[:i]
			break
		}
	}
	for i := len(frames) - 1; i >= 0; i-- {
		out = append(out, frames[i])
	}
	return out
}

// Integer returns a signed or unsigned integer value as an int64, and
// false for any other value.
func (v Value) Integer() (int64, bool) {
	return int64(v.n), v.tag == tagInt || v.tag == tagUint
}

// KeyText is a key's part as the text output prints it inside @m[...].
func KeyText(k Value) string { return keyText(k) }

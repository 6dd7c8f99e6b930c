package output

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"
)

// FoldedFrame is one frame of a folded stack.
type FoldedFrame struct {
	Name string
	Kind FrameKind
}

// FrameKind says where a folded frame comes from.
type FrameKind uint8

const (
	KeyFrame    FrameKind = iota // the key's parts that are not stacks
	UserFrame                    // a user stack's function
	KernelFrame                  // a kernel stack's function
	Delimiter                    // between a user and a kernel stack
)

// Delimiter frame and empty stack names, as BCC's profile -d and perf's
// stackcollapse show them.
const (
	delimiterName = "-"
	noStack       = "[no stack]"
)

// Folded returns s's frames as Brendan Gregg's folded stacks show them,
// root first: the key's other parts joined by "-" as one frame (comm,
// or comm-pid as perf's folded stacks name a process), the user
// frames, a "-" frame where a kernel stack follows a user one, then the
// kernel frames. Frames are function names without offsets; a key with
// nothing in it folds to "[no stack]".
func (s StackSample) Folded() []FoldedFrame {
	var frames []FoldedFrame
	if len(s.Keys) > 0 {
		parts := make([]string, len(s.Keys))
		for i, k := range s.Keys {
			parts[i] = keyText(k)
		}
		frames = append(frames, FoldedFrame{Name: strings.Join(parts, "-"), Kind: KeyFrame})
	}
	for i, f := range s.Frames {
		if f.Kernel && i > 0 && !s.Frames[i-1].Kernel {
			frames = append(frames, FoldedFrame{Name: delimiterName, Kind: Delimiter})
		}
		kind := UserFrame
		if f.Kernel {
			kind = KernelFrame
		}
		frames = append(frames, FoldedFrame{Name: f.Func, Kind: kind})
	}
	if len(frames) == 0 {
		frames = append(frames, FoldedFrame{Name: noStack, Kind: KeyFrame})
	}
	return frames
}

// foldedLine is a folded stack and its value.
type foldedLine struct {
	Stack string
	Value int64
}

// foldedLines returns sm as folded stacks: frames joined by ";". Keys
// that fold alike, such as two addresses in one function, add up into
// one line. Lines sort by value, then stack, smallest first, as
// bpftrace sorts a map's entries.
func foldedLines(sm *StackMap) []foldedLine {
	values := map[string]int64{}
	for _, s := range sm.Samples {
		frames := s.Folded()
		names := make([]string, len(frames))
		for i, f := range frames {
			names[i] = foldedName(f.Name)
		}
		values[strings.Join(names, ";")] += s.Value
	}
	lines := make([]foldedLine, 0, len(values))
	for stack, v := range values {
		lines = append(lines, foldedLine{Stack: stack, Value: v})
	}
	slices.SortFunc(lines, func(a, b foldedLine) int {
		return cmp.Or(cmp.Compare(a.Value, b.Value), cmp.Compare(a.Stack, b.Stack))
	})
	return lines
}

// foldedName keeps a frame's name from breaking the line: ";" parts
// frames and a newline ends the line.
var foldedName = strings.NewReplacer(";", ":", "\n", " ").Replace

// FoldedPrinter prints maps keyed by a stack as folded stacks (-f
// folded), and everything else as Text does.
type FoldedPrinter struct {
	*Text
}

// NewFolded returns a folded printer.
func NewFolded(out, errw io.Writer) *FoldedPrinter { return &FoldedPrinter{NewText(out, errw)} }

// Map prints m's folded stacks, "frame;frame;... value" a line; top and
// div act on the lines as print() does on entries.
func (f *FoldedPrinter) Map(m *Map, top int, div uint32) error {
	sm, err := StackSamples(m)
	if err != nil {
		return err
	}
	if sm == nil {
		return f.Text.Map(m, top, div)
	}
	lines := foldedLines(sm)
	if top > 0 && len(lines) > top {
		lines = lines[len(lines)-top:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Stack + " " + strconv.FormatInt(l.Value/int64(max(div, 1)), 10) + "\n")
	}
	return write(f.out, b.String())
}

// End prints nothing: the folded lines at exit stay free of the blank
// lines the text output leaves, for tools that read them.
func (f *FoldedPrinter) End() error { return nil }

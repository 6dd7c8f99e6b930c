package output

import (
	"io"
	"strconv"
	"strings"
)

// Text prints like bpftrace's default text output. Program output goes to
// out; messages about the run (attached probes, lost events) go to errw.
type Text struct {
	out, errw io.Writer
	benched   bool // the header of the benchmarks' table is printed
}

// NewText returns a text printer.
func NewText(out, errw io.Writer) *Text { return &Text{out: out, errw: errw} }

func (t *Text) Map(m *Map, top int, div uint32) error {
	return m.writeText(t.out, top, div)
}

// MapText returns what the text printer prints for m.
func MapText(m *Map, top int, div uint32) string {
	var b strings.Builder
	m.writeText(&b, top, div)
	return b.String()
}

// writeText prints m to w row by row: a big map is never all in memory
// as text.
func (m *Map) writeText(w io.Writer, top int, div uint32) error {
	if m.Kind == TSeries {
		return m.writeTSeries(w, false)
	}
	src := m.source()
	var c chunker
	for _, i := range m.order(src, top) {
		r := m.row(src.Entry(int(i), true), div)
		b := &c.b
		b.WriteString(m.Name)
		if r.key != nil {
			b.WriteByte('[')
			if k := *r.key; k.tag == tagInt || k.tag == tagUint {
				k.writeText(b, false) // no parentheses to drop: skip a copy
			} else {
				b.WriteString(keyText(k))
			}
			b.WriteByte(']')
		}
		if r.hist != nil {
			b.WriteString(":\n")
			r.hist.writeText(b)
		} else {
			b.WriteString(": ")
			r.val.writeText(b, false)
		}
		b.WriteByte('\n')
		if r.key == nil {
			break // bpftrace prints only the first row of a map without keys
		}
		if err := c.flush(w, false); err != nil {
			return err
		}
	}
	return c.flush(w, true)
}

// chunker collects printed rows and writes them out in chunks of about
// chunkSize bytes.
type chunker struct {
	b strings.Builder
}

const chunkSize = 64 << 10

// flush writes out what c holds if it has a chunk's worth, or if all.
func (c *chunker) flush(w io.Writer, all bool) error {
	if c.b.Len() == 0 || !all && c.b.Len() < chunkSize {
		return nil
	}
	err := write(w, c.b.String())
	c.b = strings.Builder{}
	c.b.Grow(chunkSize + chunkSize/4)
	return err
}

func (t *Text) Value(v Value) error { return write(t.out, v.String()+"\n") }

func (t *Text) Printf(s string) error { return write(t.out, s) }

func (t *Text) Time(s string) error { return write(t.out, s) }

func (t *Text) Cat(s string) error { return write(t.out, s) }

func (t *Text) Join(s string) error { return write(t.out, s+"\n") }

// Syscall prints a system() command's output; a last line without a
// newline gets one, so the next output starts on its own line. JSON keeps
// the output as it was.
func (t *Text) Syscall(s string) error { return write(t.out, strings.TrimSuffix(s, "\n")+"\n") }

func (t *Text) LostEvents(n uint64) error {
	return write(t.errw, "Lost "+strconv.FormatUint(n, 10)+" events\n")
}

// AttachedProbes prints current bpftrace's line, on stderr, once the
// probes are attached.
func (t *Text) AttachedProbes(n uint64) error {
	s := "Attached " + strconv.FormatUint(n, 10) + " probe"
	if n != 1 {
		s += "s"
	}
	return write(t.errw, s+"\n")
}

// End prints the two empty lines bpftrace leaves before the exit maps.
func (t *Text) End() error { return write(t.out, "\n\n") }

const barWidth = 52

// writeText prints histogram rows: a 16-wide left-aligned range, an
// 8-wide count and a bar scaled to the largest count.
func (h *histogram) writeText(b *strings.Builder) {
	var most uint64
	for _, c := range h.counts {
		most = max(most, c)
	}
	for i, c := range h.counts {
		var lo *bound
		if i == 0 {
			lo = h.lower
		} else {
			lo = &h.labels[i-1]
		}
		var hi *bound
		if i < len(h.labels) {
			hi = &h.labels[i]
		}
		var rng string
		switch {
		case lo == nil:
			rng = "(..., " + hi.text + ")"
		case hi == nil:
			rng = "[" + lo.text + ", ...)"
		case lo.plain && hi.plain && lo.n+1 == hi.n:
			rng = "[" + lo.text + "]"
		default:
			rng = "[" + lo.text + ", " + hi.text + ")"
		}
		b.WriteString(padRight(rng, 16))
		b.WriteString(padLeft(strconv.FormatUint(c, 10), 8))
		b.WriteString(" |")
		b.WriteString(padRight(strings.Repeat("@", bar(c, most)), barWidth))
		b.WriteString("|\n")
	}
}

// bar computes the bar length in single precision, as bpftrace does, so
// that rounding matches.
func bar(c, most uint64) int {
	if most == 0 {
		return 0 // bpftrace divides by zero here (all counts divided to 0)
	}
	return int(float32(c) / float32(most) * barWidth)
}

func padRight(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

func padLeft(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}

func write(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}

package output

import (
	"io"
	"strconv"
	"strings"
)

// JSON prints like bpftrace -f json (v0.26): one object per line, all
// on out.
type JSON struct {
	out io.Writer
}

// NewJSON returns a JSON printer.
func NewJSON(out io.Writer) *JSON { return &JSON{out: out} }

func (j *JSON) Map(m *Map, top int, div uint32) error {
	return m.writeJSON(j.out, top, div)
}

// MapJSON returns the line the JSON printer prints for m, or "" when
// bpftrace prints nothing (a map with no entries, other than avg/stats).
func MapJSON(m *Map, top int, div uint32) string {
	var b strings.Builder
	m.writeJSON(&b, top, div)
	return b.String()
}

// writeJSON prints m to w row by row, as writeText does.
func (m *Map) writeJSON(w io.Writer, top int, div uint32) error {
	if m.Kind == TSeries {
		return m.writeTSeries(w, true)
	}
	src := m.source()
	order := m.order(src, top)
	if len(order) == 0 && !m.isStats() {
		return nil
	}
	typ := "map"
	switch {
	case m.isStats():
		typ = "stats"
	case m.isHist():
		typ = "hist"
	}
	var c chunker
	b := &c.b
	b.WriteString(`{"type": "` + typ + `", "data": {`)
	writeJSONString(b, m.Name)
	b.WriteString(": ")
	for n, i := range order {
		r := m.row(src.Entry(int(i), true), div)
		if r.key == nil {
			r.writeJSON(b)
			break
		}
		if n == 0 {
			b.WriteByte('{')
		} else {
			b.WriteString(", ")
		}
		writeJSONString(b, jsonKey(*r.key))
		b.WriteString(": ")
		r.writeJSON(b)
		if n == len(order)-1 {
			b.WriteByte('}')
		}
		if err := c.flush(w, false); err != nil {
			return err
		}
	}
	if len(order) == 0 {
		b.WriteString("{}")
	}
	b.WriteString("}}\n")
	return c.flush(w, true)
}

// jsonKey is the key text without outer parentheses and, unlike text
// output, without any spaces (bpftrace strips them even inside strings).
func jsonKey(k Value) string { return strings.ReplaceAll(keyText(k), " ", "") }

func (r row) writeJSON(b *strings.Builder) {
	if r.hist != nil {
		r.hist.writeJSON(b)
	} else {
		r.val.writeJSON(b)
	}
}

func (j *JSON) Value(v Value) error {
	var b strings.Builder
	b.WriteString(`{"type": "value", "data": `)
	v.writeJSON(&b)
	b.WriteString("}\n")
	return write(j.out, b.String())
}

func (j *JSON) Printf(s string) error { return j.data("printf", s) }

func (j *JSON) Time(s string) error { return j.data("time", s) }

func (j *JSON) Cat(s string) error { return j.data("cat", s) }

func (j *JSON) Join(s string) error { return j.data("join", s) }

func (j *JSON) Syscall(s string) error { return j.data("syscall", s) }

func (j *JSON) data(typ, s string) error {
	var b strings.Builder
	b.WriteString(`{"type": "` + typ + `", "data": `)
	writeJSONString(&b, s)
	b.WriteString("}\n")
	return write(j.out, b.String())
}

func (j *JSON) LostEvents(n uint64) error {
	c := strconv.FormatUint(n, 10)
	return write(j.out, `{"type": "lost_events", "count": `+c+`, "data": {"events": `+c+"}}\n")
}

func (j *JSON) AttachedProbes(n uint64) error {
	c := strconv.FormatUint(n, 10)
	return write(j.out, `{"type": "attached_probes", "count": `+c+`, "data": {"probes": `+c+"}}\n")
}

// End prints nothing in JSON.
func (j *JSON) End() error { return nil }

func (v Value) writeJSON(b *strings.Builder) {
	switch v.tag {
	case tagNone:
		b.WriteString("null")
	case tagInt:
		writeJSONInt(b, int64(v.n))
	case tagUint, tagSym:
		writeJSONUint(b, v.n)
	case tagBool:
		b.WriteString(strconv.FormatBool(v.n != 0))
	case tagStr:
		writeJSONString(b, v.s)
	case tagStack:
		var s strings.Builder
		v.writeText(&s, false)
		writeJSONString(b, s.String())
	case tagBuf:
		// bpftrace emits the bytes as numbers of its signed char.
		b.WriteByte('[')
		for i := 0; i < len(v.s); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(int8(v.s[i]))))
		}
		b.WriteByte(']')
	case tagTuple, tagArray:
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.writeJSON(b)
		}
		b.WriteByte(']')
	case tagRecord:
		b.WriteByte('{')
		for i, f := range v.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, f.Name)
			b.WriteString(": ")
			f.Value.writeJSON(b)
		}
		b.WriteByte('}')
	}
}

// writeJSON prints buckets as {"min": lo, "max": hi, "count": n} where
// max is inclusive (one less than the label) and open ends are left out.
func (h *histogram) writeJSON(b *strings.Builder) {
	b.WriteByte('[')
	for i, c := range h.counts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		lo := h.lower
		if i > 0 {
			lo = &h.labels[i-1]
		}
		if lo != nil {
			b.WriteString(`"min": `)
			if lo.plain {
				writeJSONInt(b, lo.n)
			} else {
				writeJSONUint(b, uint64(lo.n))
			}
			b.WriteString(", ")
		}
		if i < len(h.labels) {
			b.WriteString(`"max": `)
			writeJSONInt(b, h.labels[i].n-1)
			b.WriteString(", ")
		}
		b.WriteString(`"count": ` + strconv.FormatUint(c, 10) + "}")
	}
	b.WriteByte(']')
}

// Integers a float64 cannot hold exactly are quoted, as bpftrace does.
func writeJSONInt(b *strings.Builder, n int64) {
	s := strconv.FormatInt(n, 10)
	mag := uint64(n)
	if n < 0 {
		mag = -mag
	}
	if !exactFloat(mag) {
		writeJSONString(b, s)
		return
	}
	b.WriteString(s)
}

func writeJSONUint(b *strings.Builder, n uint64) {
	s := strconv.FormatUint(n, 10)
	if !exactFloat(n) {
		writeJSONString(b, s)
		return
	}
	b.WriteString(s)
}

// exactFloat reports whether n survives a round trip through float64.
func exactFloat(n uint64) bool {
	if n == 0 {
		return true
	}
	for n&1 == 0 {
		n >>= 1
	}
	return n < 1<<53
}

// writeJSONString escapes like bpftrace: \" \\ \n \r \t, other control
// characters as \u00XX. Bytes from 0x80 up are copied unchanged;
// bpftrace's signed char would escape them as \uffffffXX, which is not
// valid JSON, so we do not copy that.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

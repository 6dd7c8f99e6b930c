package output

import (
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Point is one interval of a tseries value: its epoch, the number of
// whole intervals from time 0 to its start, and its value, an Int or a
// Uint. An epoch of 0 is a slot never written, or zeroed: its value is
// 0, as bpftrace reads it.
type Point struct {
	Epoch uint64
	Value Value
}

// interval is one row of a tseries as it prints: ok is false for an
// interval without a value.
type interval struct {
	epoch uint64
	value Value
	ok    bool
}

// writeTSeries prints a map of tseries() values as bpftrace does: each
// key's intervals from the first it has a value for among the last
// Intervals up to the latest interval of the whole map, as a chart or as
// JSON. Entries print in the order the runtime gives them, bpftrace's
// order of their raw keys; top and div do not apply.
func (m *Map) writeTSeries(w io.Writer, json bool) error {
	src := m.source()
	if src.Len() == 0 {
		return nil
	}
	var last uint64
	for i := range src.Len() {
		for _, p := range src.Entry(i, false).Series {
			last = max(last, p.Epoch)
		}
	}
	if json {
		return write(w, m.tseriesJSON(src, last))
	}
	var b strings.Builder
	for i := range src.Len() {
		e := src.Entry(i, true)
		b.WriteString(m.Name)
		if len(e.Key) > 0 {
			b.WriteString("[" + keyText(entryKey(e)) + "]")
		}
		b.WriteString(":\n")
		m.writeChart(&b, m.intervals(e.Series, last))
		b.WriteByte('\n')
		if len(e.Key) == 0 {
			break
		}
	}
	return write(w, b.String())
}

// entryKey is e's key as one value: a tuple for several.
func entryKey(e Entry) Value {
	if len(e.Key) == 1 {
		return e.Key[0]
	}
	return Tuple(e.Key...)
}

// intervals lays out the points of one key up to the map's latest
// epoch last. The range is computed in unsigned arithmetic, as in
// bpftrace: when last is below Intervals it wraps and nothing prints.
func (m *Map) intervals(points []Point, last uint64) []interval {
	first := last - m.Intervals + 1
	if first > last {
		return nil
	}
	values := map[uint64]Value{}
	start := last
	for _, p := range points {
		if _, dup := values[p.Epoch]; !dup {
			values[p.Epoch] = p.Value
		}
		if p.Epoch >= first && p.Epoch < start {
			start = p.Epoch
		}
	}
	var out []interval
	for e := start; ; e++ {
		v, ok := values[e]
		out = append(out, interval{epoch: e, value: v, ok: ok})
		if e == last {
			return out
		}
	}
}

// The chart's geometry, as bpftrace draws it: the columns of the graph,
// and the width of the minimum's label.
const (
	chartWidth   = 53
	chartPadding = 21
)

// writeChart draws the intervals as bpftrace's text output does: the
// range of values above and below, a row per interval with its time,
// a '*' placed by its value, a '.' at zero when the range spans it, and
// the value, or '-' for none.
func (m *Map) writeChart(b *strings.Builder, rows []interval) {
	if len(rows) == 0 {
		b.WriteString("<no data>\n")
		return
	}
	lo, hi := rows[0], rows[0]
	for _, r := range rows {
		if r.ok && less(r.value, lo.value) {
			lo = r
		}
		if r.ok && less(hi.value, r.value) {
			hi = r
		}
	}
	if lo.ok && same(lo.value, hi.value) {
		// Some room on either side, where the type allows.
		lo.value, hi.value = step(lo.value, -1), step(hi.value, 1)
	}
	unit, digits := chartUnit(rows, m.Interval)
	timeSize := len("hh:mm:ss")
	format := "hh:mm:ss"
	if digits > 0 {
		format += "." + unit
		timeSize += 1 + digits
	}
	label := func(r interval) string {
		if !r.ok {
			return ""
		}
		return r.value.String()
	}
	labels := padRight(label(lo), chartPadding) + padLeft(label(hi), chartWidth-chartPadding) + "\n"
	b.WriteString(strings.Repeat(" ", timeSize+1) + labels)
	b.WriteString(padRight(format, timeSize+1) + "|" + strings.Repeat("_", chartWidth-2) + "|\n")
	zero := 0
	if lo.ok && distance(lo.value, Int(0)) < 0 && distance(Int(0), hi.value) < 0 {
		zero = int(float32(chartWidth) * float32(distance(lo.value, Int(0))) / float32(distance(lo.value, hi.value)))
		// float32 rounds a ratio just under 1 up to 1, past the
		// right edge, where a value far below zero meets a small one.
		zero = min(zero, chartWidth-1)
	}
	for _, r := range rows {
		line := []byte("|" + strings.Repeat(" ", chartWidth-2) + "|")
		if zero > 0 {
			line[zero] = '.'
		}
		b.WriteString(chartTime(m.epochTime(r.epoch), digits) + " ")
		if !r.ok {
			b.WriteString(string(line) + " -\n")
			continue
		}
		at := chartWidth / 2
		if !same(lo.value, hi.value) {
			at = int(float32(chartWidth-1) * float32(distance(lo.value, r.value)) / float32(distance(lo.value, hi.value)))
		}
		line[max(0, min(chartWidth-1, at))] = '*'
		b.WriteString(string(line) + " " + r.value.String() + "\n")
	}
	bottom := "v" + strings.Repeat("_", chartWidth-2) + "v"
	b.WriteString(strings.Repeat(" ", timeSize+1) + bottom + "\n")
	b.WriteString(strings.Repeat(" ", timeSize+1) + labels)
}

// less orders two values of a tseries, all Int or all Uint.
func less(a, b Value) bool {
	if a.tag == tagInt {
		return int64(a.n) < int64(b.n)
	}
	return a.n < b.n
}

// same reports whether two values of a tseries are equal.
func same(a, b Value) bool { return a.tag == b.tag && a.n == b.n }

// step moves v by d (1 or -1) unless that leaves its type's range.
func step(v Value, d int64) Value {
	switch {
	case v.tag == tagInt && (d < 0 && int64(v.n) == math.MinInt64 || d > 0 && int64(v.n) == math.MaxInt64):
	case v.tag == tagUint && (d < 0 && v.n == 0 || d > 0 && v.n == math.MaxUint64):
	default:
		v.n += uint64(d)
	}
	return v
}

// distance is a - b as a signed number, as bpftrace computes it.
func distance(a, b Value) int64 { return int64(a.n - b.n) }

// chartUnit picks how finely the rows' times print, from the mean
// distance between them, as bpftrace does: the unit's name and its
// digits after the second, none for whole seconds. A single row has a
// distance of 0, which prints in nanoseconds.
func chartUnit(rows []interval, ns uint64) (string, int) {
	d := (rows[len(rows)-1].epoch - rows[0].epoch) * ns / uint64(max(1, len(rows)-1))
	switch {
	case d >= uint64(time.Second):
		return "s", 0
	case d >= uint64(time.Millisecond):
		return "ms", 3
	case d >= uint64(time.Microsecond):
		return "μs", 6
	}
	return "ns", 9
}

// epochTime is when interval epoch starts: tseries() counts in the TAI
// clock's nanoseconds, which print as if they were the wall clock's.
func (m *Map) epochTime(epoch uint64) time.Time {
	ns := epoch * m.Interval
	return time.Unix(int64(ns/uint64(time.Second)), int64(ns%uint64(time.Second)))
}

// chartTime prints t in the local zone with digits of its fraction.
func chartTime(t time.Time, digits int) string {
	s := t.Local().Format("15:04:05")
	if digits == 0 {
		return s
	}
	frac := strconv.Itoa(t.Nanosecond() / int(math.Pow10(9-digits)))
	return s + "." + strings.Repeat("0", digits-len(frac)) + frac
}

// tseriesJSON is the JSON line of the map: each key's intervals that
// have a value, with their start in UTC.
func (m *Map) tseriesJSON(src Source, last uint64) string {
	var b strings.Builder
	b.WriteString(`{"type": "tseries", "data": {`)
	writeJSONString(&b, m.Name)
	b.WriteString(": ")
	for i := range src.Len() {
		e := src.Entry(i, true)
		if len(e.Key) > 0 {
			if i == 0 {
				b.WriteByte('{')
			} else {
				b.WriteString(", ")
			}
			writeJSONString(&b, jsonKey(entryKey(e)))
			b.WriteString(": ")
		}
		b.WriteByte('[')
		n := 0
		for _, r := range m.intervals(e.Series, last) {
			if !r.ok {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			b.WriteString(`{"interval_start":"` + m.epochTime(r.epoch).UTC().Format("2006-01-02 15:04:05.000000000") +
				`","value":` + r.value.String() + "}")
		}
		b.WriteByte(']')
		if len(e.Key) == 0 {
			break
		}
		if i == src.Len()-1 {
			b.WriteByte('}')
		}
	}
	b.WriteString("}}\n")
	return b.String()
}

package output

import (
	"cmp"
	"math/bits"
	"slices"
	"strconv"
)

// Kind is the aggregation a map's values come from.
type Kind uint8

const (
	Scalar Kind = iota // plain assigned values: @x = expr
	Count
	Sum
	Min
	Max
	Avg
	Stats
	Hist
	LHist
	TSeries
)

// Map is a BPF map after the runtime has read and reduced it.
//
// Entries, or Source, should be in the order the BPF map iterates them:
// bpftrace sorts that order with std::sort, which keeps ties in place for
// up to 16 entries, and we sort stably, so ties print the same way for
// small maps.
type Map struct {
	Name    string // including the @
	Kind    Kind
	Entries []Entry
	// KeyNames name the parts of a key, as the program wrote them
	// ("comm", "pid", "$x"), "" for other expressions; nil when unknown.
	KeyNames []string

	HistBits int // k of hist(n, k), 0..5

	LMin, LMax, LStep int64 // lhist(n, min, max, step)

	Interval, Intervals uint64 // tseries(n, interval, intervals)
	// TSeriesAgg is how tseries() combines an interval's values: "avg",
	// "max", "min", "sum", or "" for the last one written.
	TSeriesAgg string

	// Source, when set, holds the entries instead of Entries.
	Source Source

	// Zero is the entry print() shows for a map without keys (@x) that
	// has none, never written or emptied by clear() or delete(), as
	// bpftrace v0.26 does: "@x: 0", not nothing. Nil for maps with keys
	// and for hist and lhist. Maps printed at exit leave it out.
	Zero *Entry
}

// Entry is one key of a map, its value already reduced across CPUs.
type Entry struct {
	// Key is empty for a map without keys (@x). Several values form a
	// tuple key, as for @x[a, b].
	Key []Value

	// Value holds Scalar, Count, Sum, Min and Max values. Use Int for
	// signed and Uint for unsigned values: it sets sort order and division.
	Value Value

	// Count and Total are the two halves of an avg or stats value.
	Count, Total int64

	// Buckets holds hist and lhist counts; see HistBucket and LHistBucket
	// for the index of a value. Trailing buckets may be omitted.
	Buckets []uint64

	// Series holds a tseries value's intervals; see writeTSeries.
	Series []Point
}

// HistBucket returns the bucket index bpftrace's hist(v, k) counts v in:
// 0 holds negative values, 1..2^k hold 0..2^k-1 one value each, and after
// that every power of two is split into 2^k buckets. The largest index is
// (64-k)<<k, so a hist needs ((64-k)<<k)+1 buckets.
func HistBucket(v int64, k int) int {
	if v < 0 {
		return 0
	}
	mask := int64(1)<<k - 1
	if v <= mask {
		return int(v) + 1
	}
	l := 63 - bits.LeadingZeros64(uint64(v)) - k // leftmost 1, minus k
	x := (v >> l) & mask
	return (l+1)<<k + int(x) + 1
}

// LHistBucket returns the bucket index of lhist(v, min, max, step): 0 for
// v < min, then one bucket per step, and the last one, index
// 1+(max-min)/step, for every value from its start up, including v >= max.
func LHistBucket(v, min, max, step int64) int {
	if v < min {
		return 0
	}
	if v > max {
		v = max
	}
	return int(1 + uint64(v-min)/uint64(step))
}

// Source holds the entries of a map too big to keep as Entries: the
// runtime keeps a big map's keys and values raw, and decodes an entry
// only when it is sorted and printed.
type Source interface {
	Len() int
	// Entry returns entry i. Without key, Key is left empty, which spares
	// decoding it.
	Entry(i int, key bool) Entry
}

// entries is a Source over Entries.
type entries []Entry

func (es entries) Len() int { return len(es) }

func (es entries) Entry(i int, key bool) Entry { return es[i] }

// source is where m's entries are, its Zero alone when it has none.
func (m *Map) source() Source {
	var src Source = entries(m.Entries)
	if m.Source != nil {
		src = m.Source
	}
	if src.Len() == 0 && m.Zero != nil {
		return entries{*m.Zero}
	}
	return src
}

// row is one entry ready to print: Value is divided, hists are built.
type row struct {
	key  *Value // nil for a map without keys
	val  Value
	hist *histogram
}

func (m *Map) isStats() bool { return m.Kind == Avg || m.Kind == Stats }

func (m *Map) isHist() bool { return m.Kind == Hist || m.Kind == LHist }

// order returns the indexes of the entries of src in the order bpftrace
// prints them, keeping the last top of them (top 0 keeps all).
func (m *Map) order(src Source, top int) []int32 {
	idx := make([]int32, src.Len())
	for i := range idx {
		idx[i] = int32(i)
	}
	m.sort(src, idx)
	if top > 0 && len(idx) > top {
		idx = idx[len(idx)-top:]
	}
	return idx
}

// row makes e ready to print, dividing values by div (0 means 1).
func (m *Map) row(e Entry, div uint32) row {
	if div == 0 {
		div = 1
	}
	r := row{}
	switch len(e.Key) {
	case 0:
	case 1:
		r.key = &e.Key[0]
	default:
		k := Tuple(e.Key...)
		r.key = &k
	}
	switch m.Kind {
	case Hist:
		r.hist = buildHist(e.Buckets, m.HistBits, div)
	case LHist:
		// bpftrace ignores div for lhist.
		r.hist = buildLHist(e.Buckets, m.LMin, m.LMax, m.LStep)
	case Avg:
		r.val = Int(avg(e) / int64(div))
	case Stats:
		r.val = Record(
			Field{"count", Int(e.Count)},
			Field{"average", Int(avg(e) / int64(div))},
			Field{"total", Int(e.Total)},
		)
	default:
		r.val = divide(e.Value, div)
	}
	return r
}

func avg(e Entry) int64 {
	if e.Count > 0 {
		return e.Total / e.Count
	}
	return 0
}

func divide(v Value, div uint32) Value {
	switch v.tag {
	case tagInt:
		return Int(int64(v.n) / int64(div))
	case tagUint:
		return Uint(v.n / uint64(div))
	}
	return v
}

// sort orders idx, every index of src from 0 up, the way bpftrace's
// format() does before printing. bpftrace sorts stably; ties here
// compare by index, which orders them the same and lets the sort be
// unstable and faster.
func (m *Map) sort(src Source, idx []int32) {
	if len(idx) == 0 {
		return
	}
	first := src.Entry(int(idx[0]), false)
	byValue := m.isHist() || m.isStats() || m.Kind == Min || m.Kind == Max || isIntValue(first.Value)
	if !byValue {
		sortByKey(src, idx)
		return
	}
	// bpftrace compares min/max as unsigned even when signed, so
	// negative values sort last.
	signed := m.isStats() || m.Kind != Min && m.Kind != Max && !m.isHist() && first.Value.tag == tagInt
	// Sort keys are worked out once: an entry may be costly to get.
	keys := make([]uint64, len(idx))
	for _, i := range idx {
		e := src.Entry(int(i), false)
		switch {
		case m.isHist():
			keys[i] = bucketTotal(e)
		case m.isStats():
			keys[i] = uint64(avg(e))
		default:
			keys[i] = e.Value.n
		}
	}
	tie := func(a, b int32) int { return cmp.Compare(a, b) }
	if m.isHist() {
		// bpftrace collects histograms into a map ordered by key, so
		// equal totals keep the keys' order (print(@, top) picks by it).
		tie = keyOrder(src, idx)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		c := cmp.Compare(keys[a], keys[b])
		if signed {
			c = cmp.Compare(int64(keys[a]), int64(keys[b]))
		}
		if c != 0 {
			return c
		}
		return tie(a, b)
	})
}

func isIntValue(v Value) bool { return v.tag == tagInt || v.tag == tagUint || v.tag == tagSym }

func bucketTotal(e Entry) uint64 {
	var t uint64
	for _, c := range e.Buckets {
		t += c
	}
	return t
}

// sortByKey mirrors bpftrace's sort_by_key, which sorts integer and
// string key fields stably from the last field to the first and keeps
// other fields in order: the same as comparing those fields from the
// first to the last. Integers compare as signed 64-bit, whatever their
// type; which fields count is up to the first entry.
func sortByKey(src Source, idx []int32) {
	slices.SortFunc(idx, keyOrder(src, idx))
}

// keyOrder compares two entries of src by key, as sortByKey sorts them.
func keyOrder(src Source, idx []int32) func(a, b int32) int {
	keys := make([][]Value, len(idx))
	for _, i := range idx {
		keys[i] = src.Entry(int(i), true).Key
	}
	first := keys[0]
	return func(a, b int32) int {
		for f, v := range first {
			ka, kb := keys[a][f], keys[b][f]
			var c int
			switch v.tag {
			case tagInt, tagUint, tagSym:
				c = cmp.Compare(int64(ka.n), int64(kb.n))
			case tagStr:
				c = cmp.Compare(ka.s, kb.s)
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	}
}

// bound is a histogram bucket boundary. plain bounds are bare integers:
// two adjacent ones print as a single-value row like "[1]". Other bounds
// carry a label such as "4K" and print numerically in JSON.
type bound struct {
	text  string
	n     int64
	plain bool
}

func plainBound(n int64) bound { return bound{text: strconv.FormatInt(n, 10), n: n, plain: true} }

// histogram mirrors bpftrace's output Histogram: labels[i] is the upper
// bound of bucket i; a final count without a label has no upper bound;
// a missing lower bound means the first bucket is open below.
type histogram struct {
	lower  *bound
	labels []bound
	counts []uint64
}

// usedRange finds the first and last non-empty buckets; empty ones
// outside that range are not printed.
func usedRange(buckets []uint64) (first, last int) {
	first, last = -1, -1
	for i, c := range buckets {
		if c > 0 {
			if first == -1 {
				first = i
			}
			last = i
		}
	}
	return first, last
}

func buildHist(buckets []uint64, k int, div uint32) *histogram {
	h := &histogram{}
	first, last := usedRange(buckets)
	if first == -1 {
		return h
	}
	// Indexes up to 2<<k are single values, printed as plain numbers.
	label := func(i int) bound {
		if i <= 2<<k {
			return plainBound(int64(i))
		}
		return histLabel(i, k)
	}
	if first != 0 {
		b := label(first - 1)
		h.lower = &b
	}
	for i := first; i <= last; i++ {
		h.labels = append(h.labels, label(i))
		h.counts = append(h.counts, buckets[i]/uint64(div))
	}
	return h
}

// histLabel is the upper bound of log2 bucket i, with a K/M/G/T/P/E suffix
// for each factor of 1024.
func histLabel(i, k int) bound {
	n := uint64(1) << k
	interval := uint64(i) & (n - 1)
	power := uint(i>>k) - 1
	value := (uint64(1) << power) * (n + interval)
	decade := power / 10
	text := strconv.FormatUint((uint64(1)<<(power-10*decade))*(n+interval), 10)
	if decade > 0 {
		text += string("KMGTPE"[decade-1])
	}
	return bound{text: text, n: int64(value)}
}

func buildLHist(buckets []uint64, min, max, step int64) *histogram {
	h := &histogram{}
	first, last := usedRange(buckets)
	if first == -1 {
		return h
	}
	if first != 0 {
		b := lhistLabel(min+int64(first-1)*step, step)
		h.lower = &b
	}
	for i := first; i <= last; i++ {
		// The last bucket has no upper bound.
		if n := min + int64(i)*step; n <= max {
			h.labels = append(h.labels, lhistLabel(n, step))
		}
		h.counts = append(h.counts, buckets[i])
	}
	return h
}

// lhistLabel uses K/M suffixes only when step is a multiple of 1024, so
// that either all bounds of a histogram get a suffix where they can or none.
func lhistLabel(n, step int64) bound {
	const kilo, mega = 1024, 1024 * 1024
	if step%kilo != 0 {
		return plainBound(n)
	}
	text := strconv.FormatInt(n, 10)
	switch {
	case n == 0:
	case n%mega == 0:
		text = strconv.FormatInt(n/mega, 10) + "M"
	case n%kilo == 0:
		text = strconv.FormatInt(n/kilo, 10) + "K"
	}
	return bound{text: text, n: n}
}

package output

import (
	"cmp"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// lazy is a Source that leaves keys out when not asked for them, as the
// runtime's does.
type lazy []Entry

func (l lazy) Len() int { return len(l) }

func (l lazy) Entry(i int, key bool) Entry {
	e := l[i]
	if !key {
		e.Key = nil
	}
	return e
}

// TestSource checks that a map prints the same from a Source as from
// Entries, and in the order of bpftrace's stable sorts: by value, or
// field by field from the last key field to the first.
func TestSource(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	// Few distinct values, so that ties are many.
	small := func() int64 { return rnd.Int64N(7) - 3 }
	tests := []struct {
		name  string
		m     Map
		entry func() Entry
		top   int
	}{
		{"count", Map{Name: "@c", Kind: Count}, func() Entry {
			return Entry{Key: []Value{Int(small())}, Value: Uint(uint64(small() + 3))}
		}, 0},
		{"sum top", Map{Name: "@s", Kind: Sum}, func() Entry {
			return Entry{Key: []Value{Uint(rnd.Uint64N(1000))}, Value: Int(small())}
		}, 5},
		{"max", Map{Name: "@m", Kind: Max}, func() Entry {
			return Entry{Key: []Value{Str(strconv.Itoa(rnd.IntN(50)))}, Value: Int(small())}
		}, 0},
		{"stats", Map{Name: "@st", Kind: Stats}, func() Entry {
			return Entry{Key: []Value{Int(small())}, Count: rnd.Int64N(3), Total: small() * 10}
		}, 0},
		{"hist", Map{Name: "@h", Kind: Hist}, func() Entry {
			return Entry{Key: []Value{Int(small())}, Buckets: []uint64{uint64(rnd.IntN(3)), 0, uint64(rnd.IntN(3))}}
		}, 0},
		{"lhist", Map{Name: "@l", Kind: LHist, LMin: 0, LMax: 100, LStep: 10}, func() Entry {
			return Entry{Key: []Value{Int(small())}, Buckets: []uint64{0, uint64(rnd.IntN(3)), 1}}
		}, 3},
		{"tuple keys, string values", Map{Name: "@t"}, func() Entry {
			return Entry{Key: []Value{Str(strconv.Itoa(rnd.IntN(3))), Int(small()), Bool(small() > 0), Uint(uint64(small() + 3))},
				Value: Str("v" + strconv.Itoa(rnd.IntN(100)))}
		}, 0},
		{"no keys", Map{Name: "@n", Kind: Count}, func() Entry { return Entry{Value: Uint(1)} }, 0},
		{"zero", Map{Name: "@z", Kind: Count, Zero: &Entry{Value: Uint(0)}}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 300
			switch tt.m.Name {
			case "@n":
				n = 1 // a map without keys has one entry
			case "@z":
				n = 0 // and prints its zero without
			}
			es := make([]Entry, n)
			for i := range es {
				es[i] = tt.entry()
			}
			plain, src := tt.m, tt.m
			plain.Entries, src.Source = es, lazy(es)
			text := MapText(&plain, tt.top, 0)
			if got := MapText(&src, tt.top, 0); got != text {
				t.Errorf("text from a Source:\n%s\nfrom Entries:\n%s", got, text)
			}
			if got, want := MapJSON(&src, tt.top, 0), MapJSON(&plain, tt.top, 0); got != want {
				t.Errorf("JSON from a Source:\n%s\nfrom Entries:\n%s", got, want)
			}
			if n == 0 {
				return
			}
			want := stableSorted(&plain, tt.top)
			if want := MapText(&want, 0, 0); text != want {
				t.Errorf("text:\n%s\nsorted stably:\n%s", text, want)
			}
		})
	}
}

// stableSorted returns m with its entries sorted as bpftrace does, with
// stable sorts, one per key field from the last to the first, and
// already cut to top, to print without sorting again.
func stableSorted(m *Map, top int) Map {
	es := slices.Clone(m.Entries)
	switch {
	case m.isHist():
		// From a map ordered by key, as bpftrace collects histograms.
		slices.SortStableFunc(es, func(a, b Entry) int { return cmp.Compare(int64(a.Key[0].n), int64(b.Key[0].n)) })
		slices.SortStableFunc(es, func(a, b Entry) int { return cmp.Compare(bucketTotal(a), bucketTotal(b)) })
	case m.isStats():
		slices.SortStableFunc(es, func(a, b Entry) int { return cmp.Compare(avg(a), avg(b)) })
	case m.Kind == Min || m.Kind == Max:
		slices.SortStableFunc(es, func(a, b Entry) int { return cmp.Compare(a.Value.n, b.Value.n) })
	case isIntValue(es[0].Value):
		slices.SortStableFunc(es, func(a, b Entry) int {
			if a.Value.tag == tagInt {
				return cmp.Compare(int64(a.Value.n), int64(b.Value.n))
			}
			return cmp.Compare(a.Value.n, b.Value.n)
		})
	default:
		for i := len(es[0].Key) - 1; i >= 0; i-- {
			switch es[0].Key[i].tag {
			case tagInt, tagUint, tagSym:
				slices.SortStableFunc(es, func(a, b Entry) int { return cmp.Compare(int64(a.Key[i].n), int64(b.Key[i].n)) })
			case tagStr:
				slices.SortStableFunc(es, func(a, b Entry) int { return cmp.Compare(a.Key[i].s, b.Key[i].s) })
			}
		}
	}
	if top > 0 && len(es) > top {
		es = es[len(es)-top:]
	}
	sorted := *m
	sorted.Entries = es
	sorted.Source = presorted(es)
	return sorted
}

// presorted is a Source whose entries all tie, but histograms, whose
// totals rise, so that they print in the order given.
type presorted []Entry

func (p presorted) Len() int { return len(p) }

func (p presorted) Entry(i int, key bool) Entry {
	e := p[i]
	if !key {
		// Equal sort keys whatever the kind.
		e.Value, e.Count, e.Total, e.Buckets = Uint(0), 0, 0, []uint64{uint64(i)}
	}
	return e
}

// BenchmarkBigMap prints a map of 300,000 integer keys counted once, as
// @[nsecs] = count() leaves it, from a Source that makes each key anew.
func BenchmarkBigMap(b *testing.B) {
	const n = 300000
	m := &Map{Name: "@", Kind: Count, Source: counts(n)}
	for b.Loop() {
		if err := NewText(io.Discard, io.Discard).Map(m, 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// counts is a Source of n keys counted once each.
type counts int

func (c counts) Len() int { return int(c) }

func (c counts) Entry(i int, key bool) Entry {
	e := Entry{Value: Uint(1)}
	if key {
		e.Key = []Value{Uint(uint64(i) * 7919)}
	}
	return e
}

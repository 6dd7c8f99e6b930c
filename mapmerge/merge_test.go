package mapmerge

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gtrace/output"
)

func key(parts ...output.Value) []output.Value { return parts }

func TestMerge(t *testing.T) {
	a, b := key(output.Str("a")), key(output.Str("b"))
	tests := []struct {
		name  string
		nodes []*output.Map
		want  *output.Map
	}{{
		name: "count",
		nodes: []*output.Map{
			{Name: "@c", Kind: output.Count, Entries: []output.Entry{{Key: a, Value: output.Uint(1)}, {Key: b, Value: output.Uint(2)}}},
			{Name: "@c", Kind: output.Count, Entries: []output.Entry{{Key: b, Value: output.Uint(5)}}},
		},
		want: &output.Map{Name: "@c", Kind: output.Count, Entries: []output.Entry{{Key: a, Value: output.Uint(1)}, {Key: b, Value: output.Uint(7)}}},
	}, {
		name: "sum wraps as on one machine",
		nodes: []*output.Map{
			{Name: "@s", Kind: output.Sum, Entries: []output.Entry{{Value: output.Int(1<<63 - 1)}}},
			{Name: "@s", Kind: output.Sum, Entries: []output.Entry{{Value: output.Int(2)}}},
		},
		want: &output.Map{Name: "@s", Kind: output.Sum, Entries: []output.Entry{{Value: output.Int(-1<<63 + 1)}}},
	}, {
		name: "min signed",
		nodes: []*output.Map{
			{Name: "@m", Kind: output.Min, Entries: []output.Entry{{Key: a, Value: output.Int(3)}, {Key: b, Value: output.Int(-1)}}},
			{Name: "@m", Kind: output.Min, Entries: []output.Entry{{Key: a, Value: output.Int(-2)}, {Key: b, Value: output.Int(0)}}},
		},
		want: &output.Map{Name: "@m", Kind: output.Min, Entries: []output.Entry{{Key: a, Value: output.Int(-2)}, {Key: b, Value: output.Int(-1)}}},
	}, {
		name: "max unsigned",
		nodes: []*output.Map{
			{Name: "@m", Kind: output.Max, Entries: []output.Entry{{Key: a, Value: output.Uint(1 << 63)}}},
			{Name: "@m", Kind: output.Max, Entries: []output.Entry{{Key: a, Value: output.Uint(5)}}},
		},
		want: &output.Map{Name: "@m", Kind: output.Max, Entries: []output.Entry{{Key: a, Value: output.Uint(1 << 63)}}},
	}, {
		name: "avg of all values, not of averages",
		nodes: []*output.Map{
			{Name: "@a", Kind: output.Avg, Entries: []output.Entry{{Count: 1, Total: 100}}},
			{Name: "@a", Kind: output.Avg, Entries: []output.Entry{{Count: 3, Total: 0}}},
		},
		want: &output.Map{Name: "@a", Kind: output.Avg, Entries: []output.Entry{{Count: 4, Total: 100}}},
	}, {
		name: "stats",
		nodes: []*output.Map{
			{Name: "@s", Kind: output.Stats, Entries: []output.Entry{{Key: a, Count: 2, Total: -10}}},
			{Name: "@s", Kind: output.Stats, Entries: []output.Entry{{Key: a, Count: 3, Total: 20}, {Key: b, Count: 1, Total: 1}}},
		},
		want: &output.Map{Name: "@s", Kind: output.Stats, Entries: []output.Entry{{Key: a, Count: 5, Total: 10}, {Key: b, Count: 1, Total: 1}}},
	}, {
		name: "hist buckets of different lengths",
		nodes: []*output.Map{
			{Name: "@h", Kind: output.Hist, HistBits: 1, Entries: []output.Entry{{Buckets: []uint64{0, 1, 2}}}},
			{Name: "@h", Kind: output.Hist, HistBits: 1, Entries: []output.Entry{{Buckets: []uint64{4, 0, 0, 0, 7}}}},
		},
		want: &output.Map{Name: "@h", Kind: output.Hist, HistBits: 1, Entries: []output.Entry{{Buckets: []uint64{4, 1, 2, 0, 7}}}},
	}, {
		name: "lhist",
		nodes: []*output.Map{
			{Name: "@l", Kind: output.LHist, LMax: 10, LStep: 5, Entries: []output.Entry{{Key: a, Buckets: []uint64{1, 1, 1, 1}}}},
			{Name: "@l", Kind: output.LHist, LMax: 10, LStep: 5, Entries: []output.Entry{{Key: a, Buckets: []uint64{0, 2}}}},
		},
		want: &output.Map{Name: "@l", Kind: output.LHist, LMax: 10, LStep: 5, Entries: []output.Entry{{Key: a, Buckets: []uint64{1, 3, 1, 1}}}},
	}, {
		name: "tseries sum by epoch",
		nodes: []*output.Map{
			{Name: "@t", Kind: output.TSeries, Interval: 1e9, Intervals: 3, TSeriesAgg: "sum", Entries: []output.Entry{
				{Series: []output.Point{{Epoch: 12, Value: output.Int(1)}, {Epoch: 10, Value: output.Int(2)}}},
			}},
			{Name: "@t", Kind: output.TSeries, Interval: 1e9, Intervals: 3, TSeriesAgg: "sum", Entries: []output.Entry{
				{Series: []output.Point{{Epoch: 11, Value: output.Int(4)}, {Epoch: 12, Value: output.Int(-8)}}},
			}},
		},
		want: &output.Map{Name: "@t", Kind: output.TSeries, Interval: 1e9, Intervals: 3, TSeriesAgg: "sum", Entries: []output.Entry{
			{Series: []output.Point{{Epoch: 10, Value: output.Int(2)}, {Epoch: 11, Value: output.Int(4)}, {Epoch: 12, Value: output.Int(-7)}}},
		}},
	}, {
		name: "tseries max",
		nodes: []*output.Map{
			{Name: "@t", Kind: output.TSeries, Interval: 1e9, Intervals: 3, TSeriesAgg: "max", Entries: []output.Entry{
				{Series: []output.Point{{Epoch: 12, Value: output.Uint(1)}}},
			}},
			{Name: "@t", Kind: output.TSeries, Interval: 1e9, Intervals: 3, TSeriesAgg: "max", Entries: []output.Entry{
				{Series: []output.Point{{Epoch: 12, Value: output.Uint(9)}}},
			}},
		},
		want: &output.Map{Name: "@t", Kind: output.TSeries, Interval: 1e9, Intervals: 3, TSeriesAgg: "max", Entries: []output.Entry{
			{Series: []output.Point{{Epoch: 12, Value: output.Uint(9)}}},
		}},
	}, {
		name: "keys match by type",
		nodes: []*output.Map{
			{Name: "@c", Kind: output.Count, Entries: []output.Entry{{Key: key(output.Int(1)), Value: output.Uint(1)}}},
			{Name: "@c", Kind: output.Count, Entries: []output.Entry{{Key: key(output.Uint(1)), Value: output.Uint(1)}}},
		},
		want: &output.Map{Name: "@c", Kind: output.Count, Entries: []output.Entry{
			{Key: key(output.Int(1)), Value: output.Uint(1)}, {Key: key(output.Uint(1)), Value: output.Uint(1)},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := printedAll(tt.nodes)
			got, err := Merge(tt.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if printed(got) != printed(tt.want) {
				t.Errorf("prints\n%s\nwant\n%s", printed(got), printed(tt.want))
			}
			if printedAll(tt.nodes) != before {
				t.Errorf("merging changed the nodes' maps")
			}
			backward := slices.Clone(tt.nodes)
			slices.Reverse(backward)
			reversed, err := Merge(backward)
			if err != nil || !reflect.DeepEqual(reversed, got) {
				t.Errorf("merged in reverse: %+v, %v", reversed, err)
			}
		})
	}
}

func printedAll(maps []*output.Map) string {
	var b strings.Builder
	for _, m := range maps {
		b.WriteString(printed(m))
	}
	return b.String()
}

func TestMergeErrors(t *testing.T) {
	count := &output.Map{Name: "@x", Kind: output.Count, Entries: []output.Entry{{Value: output.Uint(1)}}}
	tests := []struct {
		name  string
		nodes []*output.Map
		want  string
	}{
		{"none", nil, "no maps"},
		{"kinds", []*output.Map{count, {Name: "@x", Kind: output.Sum}}, "merge @x: a count map on one node, a sum map on another"},
		{"names", []*output.Map{count, {Name: "@y", Kind: output.Count}}, "map @x with map @y"},
		{"hist bits", []*output.Map{{Name: "@h", Kind: output.Hist, HistBits: 0}, {Name: "@h", Kind: output.Hist, HistBits: 2}},
			"merge @h: hist(n, 0) on one node, hist(n, 2) on another"},
		{"lhist bounds", []*output.Map{
			{Name: "@l", Kind: output.LHist, LMax: 100, LStep: 10}, {Name: "@l", Kind: output.LHist, LMax: 100, LStep: 5},
		}, "merge @l: lhist(n, 0, 100, 10) on one node, lhist(n, 0, 100, 5) on another"},
		{"tseries", []*output.Map{
			{Name: "@t", Kind: output.TSeries, Interval: 1, Intervals: 2, TSeriesAgg: "sum"},
			{Name: "@t", Kind: output.TSeries, Interval: 2, Intervals: 2, TSeriesAgg: "sum"},
		}, "merge @t: tseries(n, 1ns, 2, \"sum\") on one node, tseries(n, 2ns, 2, \"sum\")"},
		{"value types", []*output.Map{count, {Name: "@x", Kind: output.Count, Entries: []output.Entry{{Value: output.Int(1)}}}},
			"cannot add 1 and 1: not integers of one type"},
		{"max of strings", []*output.Map{
			{Name: "@m", Kind: output.Max, Entries: []output.Entry{{Key: key(output.Str("k")), Value: output.Str("a")}}},
			{Name: "@m", Kind: output.Max, Entries: []output.Entry{{Key: key(output.Str("k")), Value: output.Str("b")}}},
		}, "merge @m[k]: cannot compare a and b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.nodes)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if errors.Is(err, ErrNotMergeable) {
				t.Errorf("%v is ErrNotMergeable", err)
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	for _, m := range []*output.Map{
		{Name: "@s", Kind: output.Scalar, Entries: []output.Entry{{Value: output.Str("x")}}},
		{Name: "@t", Kind: output.TSeries, Interval: 1, Intervals: 1, TSeriesAgg: "avg"},
		{Name: "@t", Kind: output.TSeries, Interval: 1, Intervals: 1},
	} {
		// Even one node: whether a map merges depends on its kind only.
		_, err := Merge([]*output.Map{m})
		if !errors.Is(err, ErrNotMergeable) || !strings.Contains(err.Error(), m.Name) {
			t.Errorf("%s: error %v, want ErrNotMergeable naming the map", m.Name, err)
		}
	}
}

func TestPerNode(t *testing.T) {
	x1 := &output.Map{Name: "@x", Kind: output.Scalar, Zero: &output.Entry{Value: output.Int(0)},
		Entries: []output.Entry{{Value: output.Str("one")}}}
	x2 := &output.Map{Name: "@x", Kind: output.Scalar, Zero: &output.Entry{Value: output.Int(0)},
		Entries: []output.Entry{{Value: output.Str("two")}}}
	got, err := PerNode([]string{"node-b", "node-a"}, []*output.Map{x1, x2})
	if err != nil {
		t.Fatal(err)
	}
	want := "@x[node-a]: two\n@x[node-b]: one\n"
	if s := output.MapText(got, 0, 0); s != want {
		t.Errorf("prints\n%s\nwant\n%s", s, want)
	}
	if !reflect.DeepEqual(got.KeyNames, []string{"node"}) {
		t.Errorf("key names %q", got.KeyNames)
	}

	h := func(b ...uint64) *output.Map {
		return &output.Map{Name: "@h", Kind: output.Hist, KeyNames: []string{"comm"},
			Entries: []output.Entry{{Key: key(output.Str("cat")), Buckets: b}}}
	}
	got, err = PerNode([]string{"n1", "n2"}, []*output.Map{h(0, 1), h(0, 0, 3)})
	if err != nil {
		t.Fatal(err)
	}
	want = "@h[n1, cat]:\n[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n" +
		"@h[n2, cat]:\n[1]                    3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n"
	if s := output.MapText(got, 0, 0); s != want {
		t.Errorf("prints\n%q\nwant\n%q", s, want)
	}
	if !reflect.DeepEqual(got.KeyNames, []string{"node", "comm"}) {
		t.Errorf("key names %q", got.KeyNames)
	}

	exit := &output.Map{Name: "@n", Kind: output.Count, Entries: []output.Entry{{Value: output.Uint(3)}}}
	unnamed := &output.Map{Name: "@n", Kind: output.Count, Entries: []output.Entry{{Key: key(output.Int(1)), Value: output.Uint(3)}}}
	for _, tt := range []struct {
		m    *output.Map
		want []string
	}{{exit, []string{"node"}}, {unnamed, nil}} {
		got, err := PerNode([]string{"a"}, []*output.Map{tt.m})
		if err != nil || !reflect.DeepEqual(got.KeyNames, tt.want) {
			t.Errorf("key names %q, %v; want %q", got.KeyNames, err, tt.want)
		}
	}

	if _, err := PerNode([]string{"a"}, []*output.Map{x1, x2}); err == nil {
		t.Errorf("PerNode with too few names: no error")
	}
	if _, err := PerNode([]string{"a", "b"}, []*output.Map{x1, h(1)}); err == nil {
		t.Errorf("PerNode of different maps: no error")
	}
}

// event is a value a probe aggregates into a map, at a time.
type event struct {
	key   []output.Value
	value int64
	epoch uint64
}

// aggregate does what the BPF program and the runtime do with events on
// one machine: each key's aggregation state, entries in the order keys
// first appear, hist buckets trimmed of trailing zeros.
func aggregate(proto *output.Map, events []event) *output.Map {
	m := *proto
	m.Entries = nil
	index := map[string]int{}
	for _, ev := range events {
		id := string(appendKey(nil, ev.key))
		i, ok := index[id]
		if !ok {
			i = len(m.Entries)
			index[id] = i
			e := output.Entry{Key: ev.key}
			switch m.Kind {
			case output.Count:
				e.Value = output.Uint(0)
			case output.Sum:
				e.Value = output.Int(0)
			case output.Min, output.Max:
				e.Value = output.Int(ev.value)
			case output.Hist, output.LHist:
				e.Buckets = make([]uint64, maxBuckets(&m))
			}
			m.Entries = append(m.Entries, e)
		}
		e := &m.Entries[i]
		switch m.Kind {
		case output.Count:
			n, _ := e.Value.Uint64()
			e.Value = output.Uint(n + 1)
		case output.Sum:
			n, _ := e.Value.Int64()
			e.Value = output.Int(n + ev.value)
		case output.Min:
			n, _ := e.Value.Int64()
			e.Value = output.Int(min(n, ev.value))
		case output.Max:
			n, _ := e.Value.Int64()
			e.Value = output.Int(max(n, ev.value))
		case output.Avg, output.Stats:
			e.Count++
			e.Total += ev.value
		case output.Hist:
			e.Buckets[output.HistBucket(ev.value, m.HistBits)]++
		case output.LHist:
			e.Buckets[output.LHistBucket(ev.value, m.LMin, m.LMax, m.LStep)]++
		case output.TSeries:
			at := slices.IndexFunc(e.Series, func(p output.Point) bool { return p.Epoch == ev.epoch })
			if at < 0 {
				e.Series = append(e.Series, output.Point{Epoch: ev.epoch, Value: output.Int(ev.value)})
				continue
			}
			n, _ := e.Series[at].Value.Int64()
			switch m.TSeriesAgg {
			case "sum":
				n += ev.value
			case "min":
				n = min(n, ev.value)
			case "max":
				n = max(n, ev.value)
			}
			e.Series[at].Value = output.Int(n)
		}
	}
	for i := range m.Entries {
		m.Entries[i].Buckets = trim(m.Entries[i].Buckets)
		slices.SortFunc(m.Entries[i].Series, func(a, b output.Point) int { return int(a.Epoch) - int(b.Epoch) })
	}
	return &m
}

// TestMergeProperty splits random events among nodes, aggregates each
// node's share as the runtime would, and merges: the result must equal
// aggregating every event on one machine, and print the same.
func TestMergeProperty(t *testing.T) {
	protos := []*output.Map{
		{Name: "@count", Kind: output.Count},
		{Name: "@sum", Kind: output.Sum},
		{Name: "@min", Kind: output.Min},
		{Name: "@max", Kind: output.Max},
		{Name: "@avg", Kind: output.Avg},
		{Name: "@stats", Kind: output.Stats},
		{Name: "@hist0", Kind: output.Hist, HistBits: 0},
		{Name: "@hist5", Kind: output.Hist, HistBits: 5},
		{Name: "@lhist", Kind: output.LHist, LMin: -50, LMax: 1000, LStep: 25},
		{Name: "@tsum", Kind: output.TSeries, Interval: 1e9, Intervals: 4, TSeriesAgg: "sum"},
		{Name: "@tmin", Kind: output.TSeries, Interval: 1e9, Intervals: 4, TSeriesAgg: "min"},
		{Name: "@tmax", Kind: output.TSeries, Interval: 1e9, Intervals: 4, TSeriesAgg: "max"},
	}
	comms := []string{"bash", "sshd", "kubelet", "containerd", "cat"}
	rnd := rand.New(rand.NewPCG(7, 11))
	for round := range 20 {
		for _, proto := range protos {
			nodes := 1 + rnd.IntN(12)
			events := make([]event, rnd.IntN(500))
			for i := range events {
				k := key(output.Str(comms[rnd.IntN(len(comms))]))
				if round%2 == 1 {
					k = append(k, output.Int(int64(rnd.IntN(3))-1))
				}
				v := rnd.Int64N(2000) - 100
				if rnd.IntN(50) == 0 && proto.Kind != output.TSeries {
					// Sums of large values wrap the same way everywhere.
					// (Not in tseries: the chart's zero mark can land
					// past its right edge for values this far apart.)
					v = rnd.Int64() - 1<<62
				}
				events[i] = event{key: k, value: v, epoch: 1_750_000_000 + uint64(rnd.IntN(4))}
			}
			shares := make([][]event, nodes)
			for _, ev := range events {
				n := rnd.IntN(nodes)
				shares[n] = append(shares[n], ev)
			}
			var maps []*output.Map
			for _, s := range shares {
				maps = append(maps, aggregate(proto, s))
			}
			t.Run(fmt.Sprintf("%d%s", round, proto.Name), func(t *testing.T) {
				got, err := Merge(maps)
				if err != nil {
					t.Fatal(err)
				}
				want := aggregate(proto, events)
				// Merged entries are in the order of their keys.
				slices.SortFunc(want.Entries, func(a, b output.Entry) int {
					return bytes.Compare(appendKey(nil, a.Key), appendKey(nil, b.Key))
				})
				if !reflect.DeepEqual(got.Entries, want.Entries) {
					t.Fatalf("merged %d nodes:\n%+v\nwant\n%+v", nodes, got.Entries, want.Entries)
				}
				if printed(got) != printed(want) {
					t.Errorf("prints\n%s\nwant\n%s", printed(got), printed(want))
				}
			})
		}
	}
}

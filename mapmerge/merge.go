package mapmerge

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"

	"gtrace/output"
)

// ErrNotMergeable marks maps whose kind has no exact merge: scalar maps
// (@x = expr) and tseries of "avg" or of the last value written. Print
// them per node instead (PerNode).
var ErrNotMergeable = errors.New("cannot be merged exactly; print it per node")

// Merge combines the same map read on several nodes into one, as if
// one machine had seen every event; see doc.go for each kind's rule.
// The maps are not changed.
func Merge(maps []*output.Map) (*output.Map, error) {
	if len(maps) == 0 {
		return nil, errors.New("merge: no maps")
	}
	var mg Merger
	for _, m := range maps {
		if err := mg.Add(m); err != nil {
			return nil, err
		}
	}
	return mg.Map(), nil
}

// Merger merges maps one at a time, so that a caller can drop each
// map once added: it holds only the merged entries, whatever the
// number of nodes.
type Merger struct {
	first *output.Map // parameters, key names and zero of the merged map
	byKey map[string]int
	ents  []mergeEntry
	buf   []byte // the key being looked up
}

type mergeEntry struct {
	id string
	output.Entry
}

// Add merges m into the maps added so far. Merged entries share keys
// and values with the maps added, which are never changed. After an
// error, the Merger holds part of m: drop it.
func (mg *Merger) Add(m *output.Map) error {
	if mg.first == nil {
		if err := mergeable(m); err != nil {
			return err
		}
		// Its parameters only: the caller may drop its entries.
		first := *m
		first.Entries, first.Source = nil, nil
		mg.first = &first
		mg.byKey = map[string]int{}
	} else if err := compatible(mg.first, m); err != nil {
		return err
	}
	src := source(m)
	for i := range src.Len() {
		e := src.Entry(i, true)
		mg.buf = appendKey(mg.buf[:0], e.Key)
		var err error
		if j, ok := mg.byKey[string(mg.buf)]; ok {
			err = combine(m, &mg.ents[j].Entry, e)
		} else {
			id := string(mg.buf)
			mg.byKey[id] = len(mg.ents)
			e, err = own(m, e)
			mg.ents = append(mg.ents, mergeEntry{id: id, Entry: e})
		}
		if err != nil {
			return fmt.Errorf("merge %s[%s]: %w", m.Name, keyString(e.Key), err)
		}
	}
	return nil
}

// Map returns the merged map, its entries ordered by key so that the
// result does not depend on the order of the nodes. Nil if no map was
// added.
func (mg *Merger) Map() *output.Map {
	if mg.first == nil {
		return nil
	}
	f := mg.first
	m := &output.Map{
		Name: f.Name, Kind: f.Kind, KeyNames: f.KeyNames, HistBits: f.HistBits,
		LMin: f.LMin, LMax: f.LMax, LStep: f.LStep,
		Interval: f.Interval, Intervals: f.Intervals, TSeriesAgg: f.TSeriesAgg, Zero: f.Zero,
	}
	sorted := slices.Clone(mg.ents)
	slices.SortFunc(sorted, func(a, b mergeEntry) int { return cmp.Compare(a.id, b.id) })
	for _, e := range sorted {
		m.Entries = append(m.Entries, e.Entry)
	}
	return m
}

// appendKey appends the typed identity of a whole key.
func appendKey(b []byte, key []output.Value) []byte {
	for _, k := range key {
		b = output.AppendValueKey(b, k)
	}
	return b
}

func keyString(key []output.Value) string {
	var b bytes.Buffer
	for i, k := range key {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k.String())
	}
	return b.String()
}

// mergeable rejects the kinds that have no exact merge.
func mergeable(m *output.Map) error {
	switch {
	case m.Kind == output.Scalar:
		return fmt.Errorf("merge %s: a map of assigned values %w", m.Name, ErrNotMergeable)
	case m.Kind == output.TSeries && m.TSeriesAgg == "avg":
		return fmt.Errorf("merge %s: a tseries of averages %w", m.Name, ErrNotMergeable)
	case m.Kind == output.TSeries && m.TSeriesAgg == "":
		return fmt.Errorf("merge %s: a tseries of last values %w", m.Name, ErrNotMergeable)
	case m.Kind > output.TSeries:
		return fmt.Errorf("merge %s: unknown kind %d", m.Name, m.Kind)
	}
	return nil
}

// compatible checks that m is the same map as first, on another node.
func compatible(first, m *output.Map) error {
	if m.Name != first.Name {
		return fmt.Errorf("merge: map %s with map %s", first.Name, m.Name)
	}
	if m.Kind != first.Kind {
		return fmt.Errorf("merge %s: a %s map on one node, a %s map on another", m.Name, kindName(first.Kind), kindName(m.Kind))
	}
	switch {
	case m.Kind == output.Hist && m.HistBits != first.HistBits:
		return fmt.Errorf("merge %s: hist(n, %d) on one node, hist(n, %d) on another", m.Name, first.HistBits, m.HistBits)
	case m.Kind == output.LHist && (m.LMin != first.LMin || m.LMax != first.LMax || m.LStep != first.LStep):
		return fmt.Errorf("merge %s: lhist(n, %d, %d, %d) on one node, lhist(n, %d, %d, %d) on another",
			m.Name, first.LMin, first.LMax, first.LStep, m.LMin, m.LMax, m.LStep)
	case m.Kind == output.TSeries && (m.Interval != first.Interval || m.Intervals != first.Intervals || m.TSeriesAgg != first.TSeriesAgg):
		return fmt.Errorf("merge %s: tseries(n, %dns, %d, %q) on one node, tseries(n, %dns, %d, %q) on another",
			m.Name, first.Interval, first.Intervals, first.TSeriesAgg, m.Interval, m.Intervals, m.TSeriesAgg)
	}
	return nil
}

// own copies what of e a merge changes, so that merging leaves the
// nodes' maps as they were.
func own(m *output.Map, e output.Entry) (output.Entry, error) {
	e.Buckets = slices.Clone(e.Buckets)
	var err error
	if m.Kind == output.TSeries {
		e.Series, err = mergeSeries(m, nil, e.Series)
	}
	return e, err
}

// combine folds the entry of another node, e, into acc.
func combine(m *output.Map, acc *output.Entry, e output.Entry) error {
	var err error
	switch m.Kind {
	case output.Count, output.Sum:
		acc.Value, err = add(acc.Value, e.Value)
	case output.Min:
		acc.Value, err = extreme(acc.Value, e.Value, -1)
	case output.Max:
		acc.Value, err = extreme(acc.Value, e.Value, 1)
	case output.Avg, output.Stats:
		// The sums of both halves, so that the average is exact.
		acc.Count += e.Count
		acc.Total += e.Total
	case output.Hist, output.LHist:
		if len(e.Buckets) > len(acc.Buckets) {
			acc.Buckets = append(acc.Buckets, make([]uint64, len(e.Buckets)-len(acc.Buckets))...)
		}
		for i, c := range e.Buckets {
			acc.Buckets[i] += c
		}
	case output.TSeries:
		acc.Series, err = mergeSeries(m, acc.Series, e.Series)
	}
	return err
}

// add adds two integers of the same type, wrapping as the BPF program
// does when it adds on one machine.
func add(a, b output.Value) (output.Value, error) {
	if x, ok := a.Int64(); ok {
		if y, ok := b.Int64(); ok {
			return output.Int(x + y), nil
		}
	}
	if x, ok := a.Uint64(); ok {
		if y, ok := b.Uint64(); ok {
			return output.Uint(x + y), nil
		}
	}
	return a, fmt.Errorf("cannot add %s and %s: not integers of one type", a, b)
}

// extreme returns the lesser (sign -1) or greater (sign 1) of two
// integers of the same type, compared as that type.
func extreme(a, b output.Value, sign int) (output.Value, error) {
	c, err := compare(a, b)
	if err != nil {
		return a, err
	}
	if c*sign < 0 {
		return b, nil
	}
	return a, nil
}

func compare(a, b output.Value) (int, error) {
	if x, ok := a.Int64(); ok {
		if y, ok := b.Int64(); ok {
			return cmp.Compare(x, y), nil
		}
	}
	if x, ok := a.Uint64(); ok {
		if y, ok := b.Uint64(); ok {
			return cmp.Compare(x, y), nil
		}
	}
	return 0, fmt.Errorf("cannot compare %s and %s: not integers of one type", a, b)
}

// mergeSeries merges the points of b into acc, one point per epoch in
// epoch order: epochs count whole intervals since time 0 on every
// node, so the same epoch is the same interval everywhere. Points of
// one epoch combine by the map's aggregation, "sum", "min" or "max".
func mergeSeries(m *output.Map, acc, b []output.Point) ([]output.Point, error) {
	all := slices.Concat(acc, b)
	slices.SortStableFunc(all, func(p, q output.Point) int { return cmp.Compare(p.Epoch, q.Epoch) })
	out := all[:0]
	for _, p := range all {
		n := len(out)
		if n == 0 || out[n-1].Epoch != p.Epoch {
			out = append(out, p)
			continue
		}
		var err error
		switch m.TSeriesAgg {
		case "sum":
			out[n-1].Value, err = add(out[n-1].Value, p.Value)
		case "min":
			out[n-1].Value, err = extreme(out[n-1].Value, p.Value, -1)
		case "max":
			out[n-1].Value, err = extreme(out[n-1].Value, p.Value, 1)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

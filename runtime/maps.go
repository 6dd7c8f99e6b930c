package runtime

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/output"
	"gtrace/sema"
)

var aggKinds = map[sema.AggKind]output.Kind{
	sema.AggCount: output.Count, sema.AggSum: output.Sum, sema.AggMin: output.Min,
	sema.AggMax: output.Max, sema.AggAvg: output.Avg, sema.AggStats: output.Stats,
	sema.AggHist: output.Hist, sema.AggLHist: output.LHist, sema.AggTSeries: output.TSeries,
}

// readMap reads a whole map and merges its per-CPU values.
func (r *run) readMap(l *codegen.MapLayout) (*output.Map, error) {
	m := r.coll.Maps[l.BPFName]
	om := &output.Map{Name: l.Name, Kind: output.Scalar, KeyNames: l.KeyNames, Zero: r.dec.zeroEntry(l)}
	v := l.Value
	if v.Kind == sema.Agg {
		om.Kind = aggKinds[v.Agg]
		om.HistBits = int(v.HistBits)
		om.LMin, om.LMax, om.LStep = v.LMin, v.LMax, v.LStep
	}
	if l.Single {
		return r.readSingle(l, om)
	}
	if v.Agg == sema.AggTSeries {
		return r.readTSeries(l, om)
	}
	t := newTable(l, r.dec)
	if err := t.read(m); err != nil {
		return nil, fmt.Errorf("read %s: %w", l.Name, err)
	}
	if l.Buckets > 0 {
		t.trimBuckets()
	}
	om.Source = t
	return om, nil
}

// keyValues decodes a map key into the values it was made of.
func (d *decoder) keyValues(l *codegen.MapLayout, k []byte) []output.Value {
	switch {
	case l.Key == nil:
		return nil
	case l.Key.Kind == sema.Tuple && l.Key.Names == nil:
		// @m[a, b] prints its parts as a list; a record key prints whole.
		offs := l.Key.Offsets()
		vals := make([]output.Value, len(l.Key.Elems))
		for i, et := range l.Key.Elems {
			vals[i] = d.value(et, k[offs[i]:])
		}
		return vals
	}
	return []output.Value{d.value(l.Key, k)}
}

// allKeys lists the keys of m, in batches where the kernel can.
func allKeys(m *ebpf.Map, size int) ([][]byte, error) {
	var flat []byte
	err := lookupBatches(m, hasPerCPUValue(m.Type()), func(k, _ []byte) { flat = append(flat, k...) })
	if errors.Is(err, ebpf.ErrNotSupported) {
		return nextKeys(m, size)
	}
	if err != nil {
		return nil, err
	}
	keys := make([][]byte, len(flat)/size)
	for i := range keys {
		keys[i] = flat[i*size : (i+1)*size]
	}
	return keys, nil
}

// hasPerCPUValue says whether a map of type t, among those gtrace
// makes, has a value per CPU.
func hasPerCPUValue(t ebpf.MapType) bool {
	return t == ebpf.PerCPUHash || t == ebpf.PerCPUArray || t == ebpf.LRUCPUHash
}

// nextKeys lists the keys of m one by one.
func nextKeys(m *ebpf.Map, size int) ([][]byte, error) {
	var keys [][]byte
	var prev []byte
	for {
		next := make([]byte, size)
		var err error
		if prev == nil {
			err = m.NextKey(nil, next)
		} else {
			err = m.NextKey(prev, next)
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return keys, nil
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, next)
		prev = next
		if len(keys) > int(m.MaxEntries())*2 {
			return keys, nil // the map changed under us; what we have will do
		}
	}
}

// clearMap deletes every key of m.
func clearMap(m *ebpf.Map, size int) error {
	keys, err := allKeys(m, size)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}

// zeroMap sets every value of m to zero, keeping its keys.
func zeroMap(m *ebpf.Map, l *codegen.MapLayout) error {
	keys, err := allKeys(m, l.KeySize)
	if err != nil {
		return err
	}
	var zero any = make([]byte, l.ValueSize)
	if l.PerCPU {
		if zero, err = perCPUZeros(l.ValueSize); err != nil {
			return err
		}
	}
	for _, k := range keys {
		if err := m.Update(k, zero, ebpf.UpdateExist); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}

// perCPUZeros is a zero value of size bytes for each possible CPU, as
// a per-CPU map's update takes it.
func perCPUZeros(size int) ([][]byte, error) {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, err
	}
	values := make([][]byte, n)
	for i := range values {
		values[i] = make([]byte, size)
	}
	return values, nil
}

func align8(n int) int { return (n + 7) &^ 7 }

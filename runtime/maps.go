package runtime

import (
	"encoding/binary"
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
	sema.AggHist: output.Hist, sema.AggLHist: output.LHist,
}

// readMap reads a whole map and merges its per-CPU values.
func (r *run) readMap(l *codegen.MapLayout) (*output.Map, error) {
	m := r.coll.Maps[l.BPFName]
	om := &output.Map{Name: l.Name, Kind: output.Scalar, Zero: r.dec.zeroEntry(l)}
	v := l.Value
	if v.Kind == sema.Agg {
		om.Kind = aggKinds[v.Agg]
		om.HistBits = int(v.HistBits)
		om.LMin, om.LMax, om.LStep = v.LMin, v.LMax, v.LStep
	}
	if l.Single {
		return r.readSingle(l, om)
	}
	keys, err := allKeys(m, l.KeySize)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.Name, err)
	}
	// Histogram maps hold one BPF entry per (key, bucket): group them.
	hist := om.Kind == output.Hist || om.Kind == output.LHist
	byKey := map[string]int{}
	for _, k := range keys {
		raw, err := m.LookupBytes(k)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", l.Name, err)
		}
		if raw == nil {
			continue // deleted meanwhile
		}
		userKey := k
		switch {
		case l.Buckets > 0:
			userKey = nil
		case hist:
			userKey = k[:l.KeySize-8]
		}
		idx, seen := byKey[string(userKey)]
		if !seen {
			idx = len(om.Entries)
			byKey[string(userKey)] = idx
			om.Entries = append(om.Entries, output.Entry{Key: r.keyValues(l, userKey)})
		}
		e := &om.Entries[idx]
		if !l.PerCPU {
			e.Value = r.dec.value(v, raw)
			continue
		}
		r.merge(l, e, k, raw)
	}
	if l.Buckets > 0 {
		om.Entries = trimBuckets(om.Entries)
	}
	return om, nil
}

// trimBuckets makes the entry of an array-backed histogram look as a
// hash-backed one does, whose buckets stop at the highest one counted:
// without trailing empty buckets, and gone if none has a count.
func trimBuckets(entries []output.Entry) []output.Entry {
	if len(entries) == 0 {
		return nil
	}
	e := &entries[0]
	n := len(e.Buckets)
	for n > 0 && e.Buckets[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	e.Buckets = e.Buckets[:n]
	return entries
}

// merge folds the per-CPU values in raw into e.
func (r *run) merge(l *codegen.MapLayout, e *output.Entry, key, raw []byte) {
	stride := align8(l.ValueSize)
	ncpu := len(raw) / stride
	word := func(cpu, i int) int64 {
		return int64(binary.LittleEndian.Uint64(raw[cpu*stride+8*i:]))
	}
	switch agg := l.Value.Agg; agg {
	case sema.AggCount, sema.AggSum:
		var s int64
		for c := 0; c < ncpu; c++ {
			s += word(c, 0)
		}
		if agg == sema.AggCount {
			e.Value = output.Uint(uint64(s))
		} else {
			e.Value = output.Int(s)
		}
	case sema.AggMin, sema.AggMax:
		var best int64
		set := false
		for c := 0; c < ncpu; c++ {
			if word(c, 1) == 0 {
				continue
			}
			x := word(c, 0)
			if !set || agg == sema.AggMin && x < best || agg == sema.AggMax && x > best {
				best, set = x, true
			}
		}
		e.Value = output.Int(best)
	case sema.AggAvg, sema.AggStats:
		for c := 0; c < ncpu; c++ {
			e.Count += word(c, 0)
			e.Total += word(c, 1)
		}
	case sema.AggHist, sema.AggLHist:
		var b int
		if l.Buckets > 0 {
			b = int(binary.LittleEndian.Uint32(key))
		} else {
			b = int(binary.LittleEndian.Uint64(key[l.KeySize-8:]))
		}
		if b >= len(e.Buckets) {
			e.Buckets = append(e.Buckets, make([]uint64, b+1-len(e.Buckets))...)
		}
		for c := 0; c < ncpu; c++ {
			e.Buckets[b] += uint64(word(c, 0))
		}
	}
}

// keyValues decodes a map key into the values it was made of.
func (r *run) keyValues(l *codegen.MapLayout, k []byte) []output.Value {
	switch {
	case l.Key == nil:
		return nil
	case l.Key.Kind == sema.Tuple:
		// @m[a, b] prints its parts as a list.
		offs := l.Key.Offsets()
		vals := make([]output.Value, len(l.Key.Elems))
		for i, et := range l.Key.Elems {
			vals[i] = r.dec.value(et, k[offs[i]:])
		}
		return vals
	}
	return []output.Value{r.dec.value(l.Key, k)}
}

// allKeys lists the keys of m.
func allKeys(m *ebpf.Map, size int) ([][]byte, error) {
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
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return err
		}
		perCPU := make([][]byte, n)
		for i := range perCPU {
			perCPU[i] = make([]byte, l.ValueSize)
		}
		zero = perCPU
	}
	for _, k := range keys {
		if err := m.Update(k, zero, ebpf.UpdateExist); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
	return nil
}

func align8(n int) int { return (n + 7) &^ 7 }

package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/output"
	"gtrace/sema"
)

// readTSeries reads a map of tseries() values. Each key has an entry per
// interval slot (codegen/tseries.go), whose per-CPU values reduce to the
// latest interval a CPU wrote. The entries come in the order of their
// raw keys, as bpftrace prints them.
func (r *run) readTSeries(l *codegen.MapLayout, om *output.Map) (*output.Map, error) {
	ts := l.Value.TSeries
	om.Interval, om.Intervals, om.TSeriesAgg = ts.Interval, ts.Intervals, ts.Agg
	m := r.coll.Maps[l.BPFName]
	series := map[string][]output.Point{}
	add := func(k, raw []byte) {
		key := string(k[:l.KeySize-8])
		series[key] = append(series[key], reduceSlot(raw, align8(l.ValueSize), ts))
	}
	err := lookupBatches(m, true, add)
	if errors.Is(err, ebpf.ErrNotSupported) {
		clear(series)
		err = eachEntry(m, l.KeySize, add)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.Name, err)
	}
	for _, k := range slices.Sorted(maps.Keys(series)) {
		om.Entries = append(om.Entries, output.Entry{Key: r.dec.keyValues(l, []byte(k)), Series: series[k]})
	}
	return om, nil
}

// eachEntry calls fn with each key of m and its value, one by one, for
// kernels that cannot read a map in batches.
func eachEntry(m *ebpf.Map, keySize int, fn func(k, v []byte)) error {
	keys, err := allKeys(m, keySize)
	if err != nil {
		return err
	}
	for _, k := range keys {
		raw, err := m.LookupBytes(k)
		if err != nil {
			return err
		}
		if raw != nil { // else deleted meanwhile
			fn(k, raw)
		}
	}
	return nil
}

// tsSlot is one CPU's value of a tseries slot.
type tsSlot struct{ val, meta, epoch uint64 }

// reduceSlot merges the per-CPU values in raw, size bytes apart, of one
// slot as bpftrace does: the CPUs' values of the latest interval combine
// by the aggregation; a slot no CPU wrote is epoch 0, value 0.
func reduceSlot(raw []byte, size int, ts *sema.TSeries) output.Point {
	byEpoch := map[uint64]*tsSlot{}
	var latest uint64
	for off := 0; off+size <= len(raw); off += size {
		v := tsSlot{binary.LittleEndian.Uint64(raw[off:]), binary.LittleEndian.Uint64(raw[off+8:]),
			binary.LittleEndian.Uint64(raw[off+16:])}
		if v.epoch == 0 {
			continue
		}
		latest = max(latest, v.epoch)
		cur := byEpoch[v.epoch]
		if cur == nil {
			byEpoch[v.epoch] = &v
			continue
		}
		switch ts.Agg {
		case "": // the last value written wins; meta is when
			if tsLess(cur.meta, v.meta, ts.Signed) {
				cur.val, cur.meta = v.val, v.meta
			}
		case "avg":
			cur.val += v.val
			cur.meta += v.meta
		case "sum":
			cur.val += v.val
		case "min":
			if tsLess(v.val, cur.val, ts.Signed) {
				cur.val = v.val
			}
		case "max":
			if tsLess(cur.val, v.val, ts.Signed) {
				cur.val = v.val
			}
		}
	}
	p := output.Point{Value: tsValue(0, ts.Signed)}
	if latest == 0 {
		return p
	}
	s := byEpoch[latest]
	if ts.Agg == "avg" && s.meta != 0 {
		if ts.Signed {
			s.val = uint64(int64(s.val) / int64(s.meta))
		} else {
			s.val /= s.meta
		}
	}
	p.Epoch, p.Value = latest, tsValue(s.val, ts.Signed)
	return p
}

// tsLess compares two words as the values' type does.
func tsLess(a, b uint64, signed bool) bool {
	if signed {
		return int64(a) < int64(b)
	}
	return a < b
}

func tsValue(v uint64, signed bool) output.Value {
	if signed {
		return output.Int(int64(v))
	}
	return output.Uint(v)
}

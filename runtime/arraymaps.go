package runtime

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/output"
)

// readSingle reads into om a key-less aggregation kept in a per-CPU array
// of one entry (codegen.MapLayout.Single). Its entry always exists: it
// has no value if all its bytes are zero on every CPU, as when it was
// never written or was cleared.
func (r *run) readSingle(l *codegen.MapLayout, om *output.Map) (*output.Map, error) {
	raw, err := r.coll.Maps[l.BPFName].LookupBytes(uint32(0))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.Name, err)
	}
	t := newTable(l, r.dec)
	if slices.ContainsFunc(raw, func(b byte) bool { return b != 0 }) {
		t.add(make([]byte, l.KeySize), raw)
	}
	om.Source = t
	return om, nil
}

// zeroSingle zeroes a Single map on every CPU and sets its mark, so that
// it still prints, as a zeroed map with keys keeps them.
func zeroSingle(m *ebpf.Map, l *codegen.MapLayout) error {
	values, err := perCPUZeros(l.ValueSize)
	if err != nil {
		return err
	}
	for _, v := range values {
		v[l.ValueSize-8] = 1
	}
	return m.Update(uint32(0), values, ebpf.UpdateExist)
}

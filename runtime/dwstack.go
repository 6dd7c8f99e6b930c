package runtime

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/symbol/unwind"
)

// dwRow is a row of codegen.DwRowsMap, laid out as the BPF code reads
// it.
type dwRow struct {
	Addr      uint64
	CFAOffset int32
	RBPOffset int16
	Kind      uint8
	_         uint8
}

// dwPid is a codegen.DwPidsMap value: where a process's rows are.
type dwPid struct {
	First, Count uint32
}

// unwindTables reads the unwind tables of the processes dw_ustack
// unwinds, where the programs use it: it returns specs with the maps
// sized to hold them, and a function that fills them in the created
// collection. Otherwise it returns specs as they are and no function.
func unwindTables(specs map[string]*ebpf.MapSpec, pids []int) (map[string]*ebpf.MapSpec, func(*ebpf.Collection) error, error) {
	if specs[codegen.DwRowsMap] == nil {
		return specs, nil, nil
	}
	var rows []dwRow
	var keys []uint32
	var ranges []dwPid
	for _, pid := range pids {
		if pid == 0 || slices.Contains(keys, uint32(pid)) {
			continue
		}
		table, err := unwind.ProcessRows(pid)
		if err != nil {
			return nil, nil, fmt.Errorf("Failed to build unwind tables for pid %d: %w", pid, err)
		}
		keys = append(keys, uint32(pid))
		ranges = append(ranges, dwPid{First: uint32(len(rows)), Count: uint32(len(table))})
		for _, r := range table {
			rows = append(rows, dwRow{Addr: r.Addr, CFAOffset: r.CFAOffset, RBPOffset: int16(r.RBPOffset), Kind: uint8(r.Kind)})
		}
	}
	specs = maps.Clone(specs)
	for name, n := range map[string]int{codegen.DwRowsMap: len(rows), codegen.DwPidsMap: len(keys)} {
		spec := specs[name].Copy()
		spec.MaxEntries = uint32(max(n, 1))
		specs[name] = spec
	}
	fill := func(coll *ebpf.Collection) error {
		if len(rows) > 0 {
			idx := make([]uint32, len(rows))
			for i := range idx {
				idx[i] = uint32(i)
			}
			if _, err := coll.Maps[codegen.DwRowsMap].BatchUpdate(idx, rows, nil); err != nil {
				return fmt.Errorf("fill unwind rows: %w", err)
			}
		}
		for i, pid := range keys {
			if err := coll.Maps[codegen.DwPidsMap].Put(pid, ranges[i]); err != nil {
				return fmt.Errorf("fill unwind table of pid %d: %w", pid, err)
			}
		}
		return nil
	}
	return specs, fill, nil
}

package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf"
)

// TestArrayMapKinds checks which aggregations live in per-CPU arrays, the
// key-less ones: a hist or lhist that nothing deletes, zeroes or iterates
// (has_key() and len() refuse them), an array of its buckets; any other
// that nothing deletes or counts, an array of one entry. Unlike a hist,
// a count to zero() keeps its array: its mark says it was zeroed.
func TestArrayMapKinds(t *testing.T) {
	const read = "tracepoint:syscalls:sys_enter_read "
	tests := []struct {
		script string
		typ    ebpf.MapType
		// value is one CPU's value size in bytes; entries, of an
		// array, its buckets or its one entry.
		value, entries uint32
	}{
		{"{ @m = count(); }", ebpf.PerCPUArray, 16, 1},
		{"{ @m = sum(args->count); }", ebpf.PerCPUArray, 16, 1},
		{"{ @m = min(args->count); }", ebpf.PerCPUArray, 24, 1},
		{"{ @m = max(args->count); }", ebpf.PerCPUArray, 24, 1},
		{"{ @m = avg(args->count); }", ebpf.PerCPUArray, 24, 1},
		{"{ @m = stats(args->count); }", ebpf.PerCPUArray, 24, 1},
		{"{ @m = count(); } END { clear(@m); }", ebpf.PerCPUArray, 16, 1},
		{"{ @m = sum(args->count); } END { zero(@m); print(@m); }", ebpf.PerCPUArray, 16, 1},
		{"{ @m = count(); } END { delete(@m); }", ebpf.PerCPUHash, 8, 0},
		{"{ @m[pid] = count(); }", ebpf.PerCPUHash, 8, 0},
		{"{ @m[comm] = sum(args->count); }", ebpf.PerCPUHash, 8, 0},
		{"{ @m[pid, comm] = min(args->count); }", ebpf.PerCPUHash, 16, 0},
		{"{ @m[1] = stats(args->count); }", ebpf.PerCPUHash, 16, 0},
		{"{ @m = hist(args->count); }", ebpf.PerCPUArray, 8, 65},
		{"{ @m = hist(args->count, 2); }", ebpf.PerCPUArray, 8, 62*4 + 1},
		{"{ @m = lhist(args->count, 0, 100, 10); }", ebpf.PerCPUArray, 8, 12},
		{"{ @m = hist(args->count); } END { clear(@m); }", ebpf.PerCPUArray, 8, 65},
		{"{ @m[comm] = hist(args->count); }", ebpf.PerCPUHash, 8, 0},
		{"{ @m = hist(args->count); } END { zero(@m); }", ebpf.PerCPUHash, 8, 0},
		{"{ @m = hist(args->count); delete(@m); }", ebpf.PerCPUHash, 8, 0},
		{"{ @m = 1; }", ebpf.Hash, 8, 0},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			out := compile(t, read+tt.script, nil)
			spec := out.Spec.Maps[out.Maps["@m"].BPFName]
			if spec.Type != tt.typ || spec.ValueSize != tt.value {
				t.Errorf("%v, values of %d bytes; want %v, %d", spec.Type, spec.ValueSize, tt.typ, tt.value)
			}
			if tt.typ == ebpf.PerCPUArray && (spec.MaxEntries != tt.entries || spec.KeySize != 4) {
				t.Errorf("%d entries, keys of %d bytes; want %d, 4", spec.MaxEntries, spec.KeySize, tt.entries)
			}
		})
	}
}

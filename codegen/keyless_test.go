package codegen_test

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/bench"
)

// TestKeylessMapKinds checks which aggregations live in per-CPU arrays:
// the key-less ones that nothing deletes, counts or iterates. Unlike a
// hist, a count to zero() keeps its array: its mark says it was zeroed.
func TestKeylessMapKinds(t *testing.T) {
	const read = "tracepoint:syscalls:sys_enter_read "
	tests := []struct {
		script string
		typ    ebpf.MapType
		// value is one CPU's value size in bytes.
		value uint32
	}{
		{"{ @m = count(); }", ebpf.PerCPUArray, 16},
		{"{ @m = sum(args->count); }", ebpf.PerCPUArray, 16},
		{"{ @m = min(args->count); }", ebpf.PerCPUArray, 24},
		{"{ @m = max(args->count); }", ebpf.PerCPUArray, 24},
		{"{ @m = avg(args->count); }", ebpf.PerCPUArray, 24},
		{"{ @m = stats(args->count); }", ebpf.PerCPUArray, 24},
		{"{ @m = count(); } END { clear(@m); }", ebpf.PerCPUArray, 16},
		{"{ @m = sum(args->count); } END { zero(@m); print(@m); }", ebpf.PerCPUArray, 16},
		{"{ @m = count(); } END { delete(@m); }", ebpf.PerCPUHash, 8},
		{"{ @m = avg(args->count); } END { printf(\"%d\", len(@m)); }", ebpf.PerCPUHash, 16},
		{"{ @m[pid] = count(); }", ebpf.PerCPUHash, 8},
		{"{ @m[comm] = sum(args->count); }", ebpf.PerCPUHash, 8},
		{"{ @m[pid, comm] = min(args->count); }", ebpf.PerCPUHash, 16},
		{"{ @m[1] = stats(args->count); }", ebpf.PerCPUHash, 16},
		{"{ @m = hist(args->count); } END { zero(@m); }", ebpf.PerCPUHash, 8},
		{"{ @m = 1; }", ebpf.Hash, 8},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			out, err := bench.Compile([]byte(read + tt.script))
			if err != nil {
				t.Fatal(err)
			}
			var spec *ebpf.MapSpec
			for name, s := range out.Spec.Maps {
				if strings.HasPrefix(name, "m0_") {
					spec = s
				}
			}
			if spec == nil {
				t.Fatal("no map m0_")
			}
			if spec.Type != tt.typ || spec.ValueSize != tt.value {
				t.Errorf("%v, values of %d bytes; want %v, %d", spec.Type, spec.ValueSize, tt.typ, tt.value)
			}
			if tt.typ == ebpf.PerCPUArray && (spec.MaxEntries != 1 || spec.KeySize != 4) {
				t.Errorf("%d entries, keys of %d bytes; want 1, 4", spec.MaxEntries, spec.KeySize)
			}
		})
	}
}

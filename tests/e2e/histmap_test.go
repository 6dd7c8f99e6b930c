package e2e

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/bench"
)

// TestHistMapKinds checks which histograms live in per-CPU arrays: the
// key-less ones that nothing deletes, zeroes or iterates (has_key() and
// len() refuse them).
// The e2e tests check that both kinds print alike.
func TestHistMapKinds(t *testing.T) {
	const read = "tracepoint:syscalls:sys_enter_read "
	tests := []struct {
		script  string
		typ     ebpf.MapType
		entries uint32 // for arrays: the buckets
	}{
		{read + "{ @h = hist(args->count); }", ebpf.PerCPUArray, 65},
		{read + "{ @h = hist(args->count, 2); }", ebpf.PerCPUArray, 62*4 + 1},
		{read + "{ @h = lhist(args->count, 0, 100, 10); }", ebpf.PerCPUArray, 12},
		{read + "{ @h = hist(args->count); } END { clear(@h); }", ebpf.PerCPUArray, 65},
		{read + "{ @h[comm] = hist(args->count); }", ebpf.PerCPUHash, 0},
		{read + "{ @h = hist(args->count); } END { zero(@h); }", ebpf.PerCPUHash, 0},
		{read + "{ @h = hist(args->count); delete(@h); }", ebpf.PerCPUHash, 0},
		{read + "{ @ = count(); }", ebpf.PerCPUArray, 1},
	}
	for _, tt := range tests {
		out, err := bench.Compile([]byte(tt.script))
		if err != nil {
			t.Errorf("%s: %v", tt.script, err)
			continue
		}
		var spec *ebpf.MapSpec
		for name, s := range out.Spec.Maps {
			if strings.HasPrefix(name, "m0_") {
				spec = s
			}
		}
		if spec == nil {
			t.Errorf("%s: no map m0_", tt.script)
			continue
		}
		if spec.Type != tt.typ || tt.typ == ebpf.PerCPUArray && (spec.MaxEntries != tt.entries || spec.KeySize != 4) {
			t.Errorf("%s: %v of %d entries, key %d bytes; want %v of %d", tt.script, spec.Type, spec.MaxEntries, spec.KeySize, tt.typ, tt.entries)
		}
	}
}

package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf"
)

// TestDeclaredMaps checks that a declared map gets the BPF map type and
// size of its declaration, a key-less aggregation included, which then
// is a hash and not an array.
func TestDeclaredMaps(t *testing.T) {
	tests := []struct {
		script  string
		typ     ebpf.MapType
		entries uint32
	}{
		{"let @m = hash(3); BEGIN { @m[1] = 1; }", ebpf.Hash, 3},
		{"let @m = lruhash(2); BEGIN { @m[\"a\"] = \"b\"; }", ebpf.LRUHash, 2},
		{"let @m = percpuhash(5); BEGIN { @m[1] = count(); }", ebpf.PerCPUHash, 5},
		{"let @m = percpulruhash(4); BEGIN { @m[1, 2] = sum(3); }", ebpf.LRUCPUHash, 4},
		{"let @m = hash(1); BEGIN { @m = 1; }", ebpf.Hash, 1},
		{"let @m = percpuhash(1); BEGIN { @m = count(); }", ebpf.PerCPUHash, 1},
		{"let @m = percpulruhash(70); BEGIN { @m = hist(5); }", ebpf.LRUCPUHash, 70},
		{"BEGIN { @m[1] = 1; }", ebpf.Hash, 4096},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			out := compile(t, tt.script, nil)
			l := out.Maps["@m"]
			spec := out.Spec.Maps[l.BPFName]
			if spec.Type != tt.typ || spec.MaxEntries != tt.entries {
				t.Errorf("%v of %d entries, want %v of %d", spec.Type, spec.MaxEntries, tt.typ, tt.entries)
			}
			if l.Single || l.Buckets > 0 {
				t.Errorf("kept in an array: %+v", l)
			}
		})
	}
}

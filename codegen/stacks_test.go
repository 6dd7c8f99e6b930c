package codegen

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestStackMaps checks that each stack limit has its own stack map,
// build ids theirs, and that only scripts taking len() of a stack count
// its frames.
func TestStackMaps(t *testing.T) {
	tests := []struct {
		src    string
		maps   map[string]uint32 // stack maps and their value sizes
		counts bool              // calls bpf_get_stack to count frames
	}{
		{`kprobe:vfs_read { @[kstack] = count(); }`, map[string]uint32{"stacks": 8 * 127}, false},
		{`kprobe:vfs_read { @[kstack(3), ustack(perf, 3), ustack(1000)] = count(); }`,
			map[string]uint32{"stacks_3": 8 * 3, "stacks": 8 * 127}, false},
		{`kprobe:vfs_read { @[ustack(build_id, 30)] = count(); }`, map[string]uint32{"bstacks_30": 32 * 30}, false},
		{`kprobe:vfs_read { @ = len(kstack(5)); }`, map[string]uint32{"stacks_5": 8 * 5}, true},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			out, _, err := compile(t, tt.src)
			if err != nil {
				t.Fatal(err)
			}
			for name, m := range out.Spec.Maps {
				if m.Type != ebpf.StackTrace {
					continue
				}
				size, ok := tt.maps[name]
				if !ok || m.ValueSize != size {
					t.Errorf("stack map %s of %d-byte values, want %v", name, m.ValueSize, tt.maps)
				}
				if build := m.Flags == stackBuildIDFlag; build != (name[0] == 'b') {
					t.Errorf("stack map %s has flags %#x", name, m.Flags)
				}
			}
			counts := false
			for _, in := range out.Spec.Programs["p0"].Instructions {
				counts = counts || in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == asm.FnGetStack
			}
			if counts != tt.counts {
				t.Errorf("counts frames: %v, want %v", counts, tt.counts)
			}
		})
	}
}

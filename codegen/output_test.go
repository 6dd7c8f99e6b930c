package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"gtrace/codegen"
	"gtrace/probe"
)

// TestMapSpecs checks the BPF maps that script maps become: aggregations
// in per-CPU maps, whose values user space merges, keys padded to 8
// bytes, and hist keys followed by their bucket.
func TestMapSpecs(t *testing.T) {
	tests := []struct {
		src, m     string
		typ        ebpf.MapType
		key, value uint32
	}{
		{`BEGIN { @c[pid] = count(); }`, "@c", ebpf.PerCPUHash, 8, 8},
		{`BEGIN { @s[comm] = sum(1); }`, "@s", ebpf.PerCPUHash, 16, 8},
		{`BEGIN { @a[comm, pid] = avg(1); }`, "@a", ebpf.PerCPUHash, 24, 16},
		{`BEGIN { @m[1] = min(1); }`, "@m", ebpf.PerCPUHash, 8, 16},
		{`BEGIN { @h[pid] = hist(1); }`, "@h", ebpf.PerCPUHash, 16, 8},
		{`BEGIN { @l[pid] = lhist(1, 0, 10, 1); }`, "@l", ebpf.PerCPUHash, 16, 8},
		{`BEGIN { @v["abc"] = 1; }`, "@v", ebpf.Hash, 8, 8},
		{`BEGIN { @t[1] = (1, "abcdefghi"); }`, "@t", ebpf.Hash, 8, 16},
		{`tracepoint:syscalls:sys_enter_read { @b[tid] = str(args.buf); }`, "@b", ebpf.Hash, 8, 1024},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			out := compile(t, tt.src, nil)
			l := out.Maps[tt.m]
			if l == nil {
				t.Fatalf("no layout of %s", tt.m)
			}
			spec := out.Spec.Maps[l.BPFName]
			if spec == nil {
				t.Fatalf("no map %s for %s", l.BPFName, tt.m)
			}
			if spec.Type != tt.typ || spec.KeySize != tt.key || spec.ValueSize != tt.value {
				t.Errorf("%v with %d-byte keys and %d-byte values, want %v, %d and %d",
					spec.Type, spec.KeySize, spec.ValueSize, tt.typ, tt.key, tt.value)
			}
			if spec.MaxEntries != 4096 {
				t.Errorf("%d entries, want max_map_keys' default, 4096", spec.MaxEntries)
			}
		})
	}
}

// TestCollection checks what a collection holds beside the script's
// maps: the programs, by probe, and the maps that the generated code and
// the runtime share.
func TestCollection(t *testing.T) {
	tests := []struct {
		src   string
		progs []probe.Kind
		maps  map[string]ebpf.MapType // maps that must be there
		none  []string                // maps that must not
	}{
		{`BEGIN { printf("hi\n"); } END { exit(); }`, []probe.Kind{probe.Begin, probe.End},
			map[string]ebpf.MapType{"events": ebpf.RingBuf, "lost": ebpf.PerCPUArray, "globals": ebpf.Array},
			[]string{"stacks"}},
		{`BEGIN, END { @[probe] = count(); }`, []probe.Kind{probe.Begin, probe.End}, nil, nil},
		{`kprobe:vfs_read { @[kstack] = count(); }`, []probe.Kind{probe.Kprobe},
			map[string]ebpf.MapType{"stacks": ebpf.StackTrace}, nil},
		{`tracepoint:syscalls:sys_enter_read, tracepoint:syscalls:sys_exit_read { @ = count(); } interval:s:1 { exit(); }`,
			[]probe.Kind{probe.Tracepoint, probe.Tracepoint, probe.Interval},
			map[string]ebpf.MapType{"scratch": ebpf.PerCPUArray, "stopped": ebpf.PerCPUArray, "mapfull": ebpf.PerCPUArray}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			out := compile(t, tt.src, nil)
			if len(out.Progs) != len(tt.progs) {
				t.Fatalf("%d programs, want %d", len(out.Progs), len(tt.progs))
			}
			for i, p := range out.Progs {
				if p.Prog.Probe.Kind != tt.progs[i] {
					t.Errorf("program %d is of kind %d, want %d", i, p.Prog.Probe.Kind, tt.progs[i])
				}
				if out.Spec.Programs[p.Name] == nil {
					t.Errorf("program %s of %s is not in the collection", p.Name, p.Prog.Probe.Name)
				}
			}
			for name, typ := range tt.maps {
				if m := out.Spec.Maps[name]; m == nil || m.Type != typ {
					t.Errorf("map %s is %v, want a %v", name, m, typ)
				}
			}
			for _, name := range tt.none {
				if out.Spec.Maps[name] != nil {
					t.Errorf("map %s, which nothing uses", name)
				}
			}
		})
	}
}

// TestPidFilter checks that -p makes every probe but those gtrace runs
// itself (BEGIN, END, self) compare the current process with the pid.
func TestPidFilter(t *testing.T) {
	const pid = 4242
	filters := func(insns asm.Instructions) bool {
		getPid := false
		for _, in := range insns {
			switch {
			case in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == asm.FnGetCurrentPidTgid:
				getPid = true
			case getPid && in.OpCode.Class().IsALU() && in.Constant == pid:
				return true
			}
		}
		return false
	}
	for _, pk := range probeKinds {
		t.Run(pk.name, func(t *testing.T) {
			out := compile(t, probeSample(pk.attach), &codegen.Options{NumCPU: 2, Pid: pid})
			insns := out.Spec.Programs[out.Progs[0].Name].Instructions
			want := (&probe.Probe{Kind: pk.kind}).Attached()
			if got := filters(insns); got != want {
				t.Errorf("filters by pid: %v, want %v", got, want)
			}
			out = compile(t, probeSample(pk.attach), nil)
			if filters(out.Spec.Programs[out.Progs[0].Name].Instructions) {
				t.Errorf("filters by pid without -p")
			}
		})
	}
}

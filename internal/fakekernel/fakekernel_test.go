package fakekernel

import (
	"reflect"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/probe"
)

// TestTypes checks that every member of the fake types lies within its
// struct, as real BTF's do.
func TestTypes(t *testing.T) {
	for name := range types() {
		typ, err := KernelType(name)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := typ.(*btf.Struct)
		if !ok {
			continue
		}
		for _, m := range s.Members {
			size, err := btf.Sizeof(m.Type)
			if err != nil {
				t.Fatalf("%s.%s: %v", name, m.Name, err)
			}
			if end := int(m.Offset.Bytes()) + size; end > int(s.Size) {
				t.Errorf("%s.%s ends at byte %d, past the struct's %d", name, m.Name, end, s.Size)
			}
		}
	}
	if v, ok := EnumValue("PAIR_B"); !ok || v != 2 {
		t.Errorf("PAIR_B = %d, %v; want 2, true", v, ok)
	}
}

// TestFormat checks that the fields of each format lie one after the
// other, past the common fields.
func TestFormat(t *testing.T) {
	for _, event := range []string{"sys_enter_read", "sys_exit_read"} {
		f, err := Format("syscalls", event)
		if err != nil {
			t.Fatal(err)
		}
		end := 8
		for _, fd := range f.Fields {
			if fd.Offset < end {
				t.Errorf("%s: %s at %d overlaps what ends at %d", event, fd.Name, fd.Offset, end)
			}
			end = fd.Offset + fd.Size
		}
	}
}

// TestExpand checks the attach points that Expand makes up.
func TestExpand(t *testing.T) {
	tests := []struct {
		text string
		want probe.Probe
	}{
		{"t:syscalls:sys_enter_*", probe.Probe{Kind: probe.Tracepoint, Name: "tracepoint:syscalls:sys_enter_*", Target: "syscalls", Event: "sys_enter_*"}},
		{"rawtracepoint:vmlinux:sched_switch", probe.Probe{Kind: probe.RawTracepoint, Name: "rawtracepoint:sched_switch", Event: "sched_switch"}},
		{"fentry:vfs_read", probe.Probe{Kind: probe.Fentry, Name: "fentry:vfs_read", Event: "vfs_read"}},
	}
	for _, tt := range tests {
		got, err := Expand(tt.text)
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
			t.Errorf("Expand(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
		}
	}
	got, err := Expand("usdt:prog:gtest:probe")
	if err != nil || len(got) != 1 {
		t.Fatalf("Expand(usdt) = %+v, %v", got, err)
	}
	if u := got[0].USDT; u == nil || len(u.Arguments) != 3 || got[0].Name != "usdt:prog:gtest:probe" {
		t.Errorf("usdt probe %+v, site %+v", got[0], u)
	}
}

package kernel

import (
	"bytes"
	"os"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestRawEnums checks the raw index of the kernel's enum values against
// cilium/ebpf's decoding of every type: each name gives the same value.
func TestRawEnums(t *testing.T) {
	raw, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	x, err := rawEnums(raw)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := vmlinux()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for typ := range spec.All() {
		if e, ok := typ.(*btf.Enum); ok {
			for _, v := range e.Values {
				want[v.Name] = int64(v.Value)
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("the kernel's BTF has no enum values")
	}
	// Every value indexed is the one decoded for its name, and every
	// name decoded is indexed.
	names := map[string]bool{}
	for off, v := range x.vals {
		end := bytes.IndexByte(x.strs[off:], 0)
		name := string(x.strs[off : int(off)+end])
		names[name] = true
		if w, ok := want[name]; !ok || w != v {
			t.Errorf("%s: %d indexed, want %d, %v", name, v, w, ok)
		}
	}
	if len(names) != len(want) {
		t.Errorf("%d names indexed, %d decoded", len(names), len(want))
	}
	// Looked up by name, some of them.
	i := 0
	for name, v := range want {
		if i++; i%100 != 0 && name != "REQ_OP_WRITE" {
			continue
		}
		if got, ok := x.value(name); !ok || got != v {
			t.Errorf("%s: %d, %v; want %d", name, got, ok, v)
		}
	}
	for _, name := range []string{"", "REQ_OP_NOPE", "task_struct", "REQ_OP_WRIT"} {
		if v, ok := x.value(name); ok {
			t.Errorf("%q: %d, want none", name, v)
		}
	}
	if _, err := rawEnums(raw[:30]); err == nil {
		t.Error("a truncated blob: no error")
	}
}

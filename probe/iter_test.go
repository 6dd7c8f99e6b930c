package probe

import (
	"testing"

	"gtrace/kernel"
)

func TestParseIter(t *testing.T) {
	if _, err := kernel.Iterators(); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	checkParse(t, []parseCase{
		{text: "iter:task", want: Probe{Kind: Iter, Name: "iter:task", Event: "task"}},
		{text: "it:task_file", want: Probe{Kind: Iter, Name: "iter:task_file", Event: "task_file"}},
		{text: "iter:task_vma:vmas", want: Probe{Kind: Iter, Name: "iter:task_vma:vmas", Event: "task_vma", Pin: "vmas"}},
		{text: "iter", err: "iter probe type takes 2 arguments (1 optional)"},
		{text: "iter:task:a:b", err: "iter probe type takes 2 arguments (1 optional)"},
		{text: "iter:task*", err: "iter probe type does not support wildcards"},
		{text: "iter:task:pin*", err: "iter probe type does not support wildcards"},
		{text: "iter:", err: "iter should specify a iterator's name"},
		{text: "iter:no_such_iterator", err: "iter no_such_iterator not available for your kernel version."},
	}, func(t *testing.T, p Probe) {
		if !p.Attached() || p.Func() != p.Event {
			t.Errorf("%s: attached %v, func %q", p.Name, p.Attached(), p.Func())
		}
	})
}

func TestPinPath(t *testing.T) {
	for pin, want := range map[string]string{"list": "/sys/fs/bpf/list", "a/b": "/sys/fs/bpf/a/b", "/sys/fs/bpf/files": "/sys/fs/bpf/files"} {
		if got := (&Probe{Kind: Iter, Pin: pin}).PinPath(); got != want {
			t.Errorf("PinPath of %q = %q, want %q", pin, got, want)
		}
	}
}

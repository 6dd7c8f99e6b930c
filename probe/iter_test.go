package probe

import (
	"reflect"
	"testing"

	"gtrace/kernel"
)

func TestParseIter(t *testing.T) {
	if _, err := kernel.Iterators(); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	tests := []struct {
		text string
		want Probe
		err  string
	}{
		{text: "iter:task", want: Probe{Kind: Iter, Name: "iter:task", Event: "task"}},
		{text: "it:task_file", want: Probe{Kind: Iter, Name: "iter:task_file", Event: "task_file"}},
		{text: "iter:task_vma:vmas", want: Probe{Kind: Iter, Name: "iter:task_vma:vmas", Event: "task_vma", Pin: "vmas"}},
		{text: "iter", err: "iter probe type takes 2 arguments (1 optional)"},
		{text: "iter:task:a:b", err: "iter probe type takes 2 arguments (1 optional)"},
		{text: "iter:task*", err: "iter probe type does not support wildcards"},
		{text: "iter:task:pin*", err: "iter probe type does not support wildcards"},
		{text: "iter:", err: "iter should specify a iterator's name"},
		{text: "iter:no_such_iterator", err: "iter no_such_iterator not available for your kernel version."},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("Parse(%q) error %v, want %q", tt.text, err, tt.err)
				}
				return
			}
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
			}
			if !got[0].Attached() || got[0].Func() != got[0].Event {
				t.Errorf("%s: attached %v, func %q", tt.text, got[0].Attached(), got[0].Func())
			}
		})
	}
}

func TestPinPath(t *testing.T) {
	for pin, want := range map[string]string{"list": "/sys/fs/bpf/list", "a/b": "/sys/fs/bpf/a/b", "/sys/fs/bpf/files": "/sys/fs/bpf/files"} {
		if got := (&Probe{Kind: Iter, Pin: pin}).PinPath(); got != want {
			t.Errorf("PinPath of %q = %q, want %q", pin, got, want)
		}
	}
}

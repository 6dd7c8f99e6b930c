package e2e

import (
	"strings"
	"testing"

	"gtrace/tests/internal/harness"
)

// TestListStruct runs gtrace -l and -lv on kernel structs whose layout has
// been stable for years, expecting what bpftrace v0.26 prints: the BTF
// it is from, the definition as libbpf's btf_dump writes it, then an
// empty line.
func TestListStruct(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-lv", "struct list_head"}, "vmlinux: struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n\n"},
		{[]string{"-l", "struct callback_head", "-v"}, "vmlinux: struct callback_head {\n\tstruct callback_head *next;\n\tvoid (*func)(struct callback_head *);\n};\n\n"},
		{[]string{"-lv", "struct qstr"}, "vmlinux: struct qstr {\n\tunion {\n\t\tstruct {\n\t\t\tu32 hash;\n\t\t\tu32 len;\n\t\t};\n\t\tu64 hash_len;\n\t};\n\tconst unsigned char *name;\n};\n\n"},
		{[]string{"-l", "struct list_head"}, "struct list_head\n"},
		{[]string{"-l", "struct no_such_struct_*"}, ""},
	}
	for _, tt := range tests {
		r := harness.Gtrace(t, tt.args...)
		if r.Code != 0 || r.Stdout != tt.want {
			t.Errorf("gtrace %q: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", tt.args, r.Code, r.Stdout, tt.want, r.Stderr)
		}
	}

	// struct request's layout changes between kernels: check only that
	// it is listed in full.
	r := harness.Gtrace(t, "-lv", "struct request")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "vmlinux: struct request {\n\tstruct request_queue *q;\n") || !strings.HasSuffix(r.Stdout, "\n};\n\n") {
		t.Errorf("gtrace -lv 'struct request': exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}

	r = harness.Gtrace(t, "-lv", "struct no_such_struct")
	if r.Code == 0 || !strings.Contains(r.Stderr, "struct no_such_struct is not in the kernel's BTF") {
		t.Errorf("gtrace -lv 'struct no_such_struct': exit %d, want an error; stderr:\n%s", r.Code, r.Stderr)
	}
}

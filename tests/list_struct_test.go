package tests

import (
	"strings"
	"testing"
)

// TestListStruct runs gtrace -l and -lv on kernel structs whose layout has
// been stable for years, expecting what bpftrace v0.26 prints: the
// definition as libbpf's btf_dump writes it, then an empty line.
func TestListStruct(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-lv", "struct list_head"}, "struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n\n"},
		{[]string{"-l", "struct callback_head", "-v"}, "struct callback_head {\n\tstruct callback_head *next;\n\tvoid (*func)(struct callback_head *);\n};\n\n"},
		{[]string{"-lv", "struct qstr"}, "struct qstr {\n\tunion {\n\t\tstruct {\n\t\t\tu32 hash;\n\t\t\tu32 len;\n\t\t};\n\t\tu64 hash_len;\n\t};\n\tconst unsigned char *name;\n};\n\n"},
		{[]string{"-l", "struct list_head"}, "struct list_head\n"},
		{[]string{"-l", "struct no_such_struct_*"}, ""},
	}
	for _, tt := range tests {
		r := gtrace(t, tt.args...)
		if r.code != 0 || r.stdout != tt.want {
			t.Errorf("gtrace %q: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", tt.args, r.code, r.stdout, tt.want, r.stderr)
		}
	}

	// struct request's layout changes between kernels: check only that
	// it is listed in full.
	r := gtrace(t, "-lv", "struct request")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "struct request {\n\tstruct request_queue *q;\n") || !strings.HasSuffix(r.stdout, "\n};\n\n") {
		t.Errorf("gtrace -lv 'struct request': exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = gtrace(t, "-lv", "struct no_such_struct")
	if r.code == 0 || !strings.Contains(r.stderr, "struct no_such_struct is not in the kernel's BTF") {
		t.Errorf("gtrace -lv 'struct no_such_struct': exit %d, want an error; stderr:\n%s", r.code, r.stderr)
	}
}

package sema

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestRawTracepointArgs types a raw tracepoint's args by the fake
// kernel's __probestub_sched_switch.
func TestRawTracepointArgs(t *testing.T) {
	for _, tc := range []struct {
		src, want string // want: the type of @x, or an error
	}{
		{`rawtracepoint:sched_switch { @x = args.prev_state; }`, "uint32"},
		{`rawtracepoint:sched_switch { @x = args.next; }`, "struct task_struct *"},
		{`rawtracepoint:sched_switch { @x = args.next->pid; }`, "int32"},
		{`rawtracepoint:sched_switch { @x = args; }`, "record"},
		{`rawtracepoint:sched_switch { @x = args.nope; }`, "ERROR: Can't find a field nope in rawtracepoint:sched_switch"},
		{`rawtracepoint:other_event { @x = args.n; }`, "ERROR: no BTF for raw tracepoint other_event"},
	} {
		f := token.NewFile("stdin", []byte(tc.src))
		prog, errs := parser.ParseFile(f)
		if errs.HasErrors() {
			t.Fatalf("parse %q: %v", tc.src, errs)
		}
		info, errs := Check(prog, fakeOptions(DefaultConfig()))
		got := ""
		switch {
		case len(errs) > 0:
			got = "ERROR: " + errs[0].Msg
		case info.Maps["@x"].Value.Names != nil:
			got = "record"
		default:
			got = info.Maps["@x"].Value.String()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.src, got, tc.want)
		}
	}
}

func TestIntRegisters(t *testing.T) {
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	for _, tc := range []struct {
		t    btf.Type
		want int
	}{
		{&btf.Int{Name: "char", Size: 1}, 1},
		{&btf.Pointer{Target: &btf.Void{}}, 1},
		{&btf.Typedef{Name: "off_t", Type: long}, 1},
		{&btf.Int{Name: "__int128", Size: 16}, 2},
		{&btf.Struct{Name: "pair", Size: 16, Members: []btf.Member{{Name: "a", Type: long}, {Name: "b", Type: long, Offset: 64}}}, 2},
		{&btf.Struct{Name: "big", Size: 24}, 0},
		{&btf.Float{Name: "double", Size: 8}, 0},
	} {
		if got := intRegisters(tc.t); got != tc.want {
			t.Errorf("intRegisters(%v) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

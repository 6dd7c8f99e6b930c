package sema

import (
	"strings"
	"testing"

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

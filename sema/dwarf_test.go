package sema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/internal/fakekernel"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// rawFunc is the fake kernel's function for the raw tracepoint
// fake_event(struct file *file, long n), after the context pointer.
func rawFunc(name string) (*btf.Func, error) {
	if name != "__probestub_fake_event" {
		return nil, fmt.Errorf("function %s is not in the kernel's BTF", name)
	}
	file, _ := fakekernel.KernelType("struct file")
	proto := &btf.FuncProto{Return: &btf.Void{}, Params: []btf.FuncParam{
		{Name: "__data", Type: &btf.Pointer{Target: &btf.Void{}}},
		{Name: "file", Type: &btf.Pointer{Target: file}},
		{Name: "n", Type: &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}},
	}}
	return &btf.Func{Name: name, Type: proto}, nil
}

func TestRawTracepointArgs(t *testing.T) {
	for _, tc := range []struct {
		src, want string // want: the types of @x, or an error
	}{
		{`rawtracepoint:fake_event { @x = args.n; }`, "int64"},
		{`rawtracepoint:fake_event { @x = args.file; }`, "struct file *"},
		{`rawtracepoint:fake_event { @x = args; }`, "record"},
		{`rawtracepoint:fake_event { @x = args.nope; }`, "ERROR: Can't find a field nope in rawtracepoint:fake_event"},
		{`rawtracepoint:other_event { @x = args.n; }`, "ERROR: no BTF for raw tracepoint other_event"},
	} {
		f := token.NewFile("stdin", []byte(tc.src))
		prog, errs := parser.ParseFile(f)
		if errs.HasErrors() {
			t.Fatalf("parse %q: %v", tc.src, errs)
		}
		opts := fakeOptions(DefaultConfig())
		opts.Func = rawFunc
		info, errs := Check(prog, opts)
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

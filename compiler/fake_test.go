package compiler_test

import (
	"errors"
	"strings"

	"github.com/cilium/ebpf/btf"

	"gtrace/codegen"
	"gtrace/kernel"
	"gtrace/probe"
	"gtrace/sema"
)

var fakeKernel = sema.Options{
	Expand: func(text string) ([]probe.Probe, error) {
		kind, rest, _ := strings.Cut(text, ":")
		switch strings.ToLower(kind) {
		case "begin", "end", "interval", "i", "profile", "p":
			return probe.Parse(text)
		case "tracepoint", "t":
			cat, ev, _ := strings.Cut(rest, ":")
			return []probe.Probe{{Kind: probe.Tracepoint, Name: "tracepoint:" + rest, Target: cat, Event: ev}}, nil
		}
		return nil, errors.New("not in this fuzz test")
	},
	Format: func(category, event string) (*kernel.Format, error) {
		return &kernel.Format{Fields: []kernel.Field{
			{Name: "__syscall_nr", CType: "int", Offset: 8, Size: 4, Signed: true},
			{Name: "fd", CType: "unsigned int", Offset: 16, Size: 8},
			{Name: "count", CType: "size_t", Offset: 32, Size: 8},
			{Name: "ret", CType: "long", Offset: 16, Size: 8, Signed: true},
			{Name: "filename", CType: "const char *", Offset: 40, Size: 8},
		}}, nil
	},
	KernelType: func(name string) (btf.Type, error) { return nil, errors.New("no kernel types") },
	EnumValue:  func(string) (int64, bool) { return 0, false },
	Kaddr:      func(string) (uint64, bool) { return 0, false },
	HasKprobes: func() bool { return false },
}

var fakeCodegen = codegen.Options{NumCPU: 2}

package sema

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"

	"gtrace/kernel"
	"gtrace/probe"
)

// argFields types the fields of a tracepoint's format for args.
func (c *checker) argFields(f *kernel.Format) []*ArgField {
	fields := make([]*ArgField, 0, len(f.Fields))
	for _, kf := range f.Fields {
		af := &ArgField{Name: kf.Name, Offset: kf.Offset, Size: kf.Size}
		isChar := strings.HasPrefix(strings.TrimPrefix(kf.CType, "const "), "char") && !strings.Contains(kf.CType, "*")
		switch {
		case kf.DataLoc && isChar:
			af.DataLoc = true
			af.Type = StringType(c.opts.Config.MaxStrlen)
		case kf.ArrayLen > 0 && isChar:
			af.InRecord = true
			af.Type = StringType(kf.ArrayLen)
		case kf.ArrayLen > 0 && !kf.DataLoc && isIntSize(kf.Size/kf.ArrayLen) && kf.Size%kf.ArrayLen == 0:
			af.InRecord = true
			af.Type = ArrayType(IntType(kf.Size/kf.ArrayLen, kf.Signed), kf.ArrayLen)
		case kf.DataLoc || kf.ArrayLen > 0:
			af.Type = nil // dynamic arrays other than strings need kernel types
		case strings.Contains(kf.CType, "*"):
			af.Type = c.argPointer(kf.CType)
		case isIntSize(kf.Size):
			af.Type = IntType(kf.Size, kf.Signed)
			if enum, ok := c.argEnum(kf.CType); ok {
				af.Type.Enum = enum // printed by name
			}
		}
		fields = append(fields, af)
	}
	if c.prog.Probe.Fused != nil {
		return fuseFields(fields)
	}
	return fields
}

// fuseFields places the fields of a syscall tracepoint for a program run
// from raw_syscalls: __syscall_nr, then the arguments in order, or ret.
// The common_ fields of the record have no counterpart there.
func fuseFields(fields []*ArgField) []*ArgField {
	var out []*ArgField
	arg := 0
	for _, f := range fields {
		switch {
		case f.Name == "__syscall_nr":
			f.From = SyscallNr
		case f.Name == "ret":
			f.From = SyscallRet
		case f.Offset >= 16: // after the common fields and the number
			f.From, f.Arg = SyscallArg, arg
			arg++
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// argPointer types a pointer field of a tracepoint record: a pointer to
// a kernel struct or union can be followed with ->; any other pointer is
// an address, as bpftrace 0.17's tools expect (str(args->filename)).
func (c *checker) argPointer(ctype string) *Type {
	base := strings.TrimSpace(strings.TrimPrefix(ctype, "const "))
	name, stars, _ := strings.Cut(base, "*")
	name = strings.TrimSpace(name)
	if strings.TrimSpace(stars) != "" || !isCompositeName(name) || strings.HasPrefix(name, "enum ") {
		return Uint64
	}
	t, err := c.lookupType(name)
	if err != nil {
		return Uint64
	}
	return &Type{Kind: Pointer, Size: 8, BTF: t}
}

// argEnum finds the kernel enum that a tracepoint field is declared as.
func (c *checker) argEnum(ctype string) (*btf.Enum, bool) {
	name := strings.TrimSpace(strings.TrimPrefix(ctype, "const "))
	if !strings.HasPrefix(name, "enum ") {
		return nil, false
	}
	t, err := c.lookupType(name)
	if err != nil {
		return nil, false
	}
	enum, ok := btf.UnderlyingType(t).(*btf.Enum)
	return enum, ok
}

func isIntSize(n int) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// tracepointFormat reads a tracepoint's format, with a message for the user.
func tracepointFormat(category, event string) (*kernel.Format, error) {
	f, err := kernel.TracepointFormat(category, event)
	if err != nil {
		return nil, fmt.Errorf("can not read the format of tracepoint:%s:%s: %v", category, event, err)
	}
	return f, nil
}

// probeArgs lists the fields of args: a tracepoint's record, or an
// fentry or fexit function's parameters.
func (c *checker) probeArgs() ([]*ArgField, error) {
	if c.prog.Probe.Context() == probe.BTFArgs {
		fa, err := c.funcArgs()
		if err != nil {
			return nil, err
		}
		return fa.params, nil
	}
	switch c.prog.Probe.Kind {
	case probe.Uprobe:
		return c.uprobeArgs()
	case probe.RawTracepoint:
		return c.rawTracepointArgs()
	}
	format, err := c.opts.Format(c.prog.Probe.Target, c.prog.Probe.Event)
	if err != nil {
		return nil, err
	}
	return c.argFields(format), nil
}

// funcArgs are an fentry or fexit program's arguments: the context is
// an array of 64-bit words, the parameters in order, then for fexit the
// return value.
type funcArgs struct {
	params []*ArgField
	retval *ArgField
}

func (c *checker) funcArgs() (*funcArgs, error) {
	fn, err := c.opts.Func(c.prog.Probe.Func())
	if err != nil {
		return nil, err
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok {
		return nil, fmt.Errorf("%s has no prototype in the kernel's BTF", fn.Name)
	}
	fa := &funcArgs{}
	for i, p := range proto.Params {
		fa.params = append(fa.params, &ArgField{Name: p.Name, Offset: 8 * i, Size: 8, Type: fromBTF(p.Type)})
	}
	ret := fromBTF(proto.Return)
	if ret == nil || !ret.IsScalar() {
		ret = Int64
	}
	fa.retval = &ArgField{Name: "retval", Offset: 8 * len(proto.Params), Size: 8, Type: ret}
	c.prog.Retval = fa.retval
	return fa, nil
}

package sema

import (
	"fmt"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/probe"
	"gtrace/symbol"
)

// uprobeArgs are the parameters of a uprobe's function, typed by the
// binary's DWARF. Each is read from the register it is passed in.
func (c *checker) uprobeArgs() ([]*ArgField, error) {
	p := &c.prog.Probe
	if p.Event == "" {
		return nil, fmt.Errorf("args needs a function name, not an address, to find its parameters")
	}
	d, err := symbol.DebugInfo(p.Target)
	if err != nil {
		return nil, err
	}
	params, err := d.Params(p.Event)
	if err != nil {
		return nil, err
	}
	fields := make([]*ArgField, 0, len(params))
	reg := 0
	for _, prm := range params {
		t := fromBTF(prm.Type)
		if t != nil && (!t.IsScalar() || t.Size > 8) {
			t = nil // a struct or a 128-bit integer: not one register
		}
		fields = append(fields, &ArgField{Name: prm.Name, Size: 8, Type: t, From: UprobeArg, Arg: reg})
		reg += intRegisters(prm.Type)
	}
	return fields, nil
}

// intRegisters is how many of the integer registers the x86_64 calling
// convention passes a parameter of type t in: none for a float or a
// struct larger than 16 bytes (in memory), two for 16 bytes.
func intRegisters(t btf.Type) int {
	if _, ok := btf.UnderlyingType(t).(*btf.Float); ok {
		return 0
	}
	size, err := btf.Sizeof(t)
	switch {
	case err != nil || size > 16:
		return 0
	case size > 8:
		return 2
	}
	return 1
}

// registerArg makes args.NAME of a uprobe stand for (T)argN.
func (c *checker) registerArg(e *ast.Field, f *ArgField) *Type {
	if f.Arg >= 6 {
		c.errorf(e, "args.%s is passed on the stack: a uprobe reads only the six arguments passed in registers", f.Name)
		return nil
	}
	id := &ast.Ident{At: e.At, Name: fmt.Sprintf("arg%d", f.Arg)}
	c.prog.Builtins[id] = builtin.ArgN
	c.prog.Types[id] = Uint64
	cast := &ast.Cast{At: e.At, Type: &ast.TypeExpr{At: e.At, Name: "uint64"}, X: id}
	c.prog.Types[cast] = f.Type
	c.prog.Stands[e] = cast
	return f.Type
}

// wholeArgs makes args alone stand for the record of all its fields,
// (name = args.name, ...), as bpftrace prints and stores it.
func (c *checker) wholeArgs(e *ast.Ident) *Type {
	fields, err := c.probeArgs()
	if err != nil {
		c.errorf(e, "%v", err)
		return nil
	}
	if len(fields) == 0 {
		c.errorf(e, "%s has no arguments", c.prog.Probe.Name)
		return nil
	}
	rec := &ast.Tuple{At: e.At}
	for _, f := range fields {
		rec.Elems = append(rec.Elems, &ast.Field{At: e.At, X: &ast.Ident{At: e.At, Name: "args"}, Name: f.Name})
		rec.Names = append(rec.Names, f.Name)
	}
	c.prog.Stands[e] = rec
	return c.expr(rec)
}

// userType finds a struct, union, enum or typedef in the DWARF of the
// probe's binary, for a uprobe's casts and declarations. The script's
// own definitions, read before any probe, see only the kernel's.
func (c *checker) userType(name string) (btf.Type, bool) {
	if c.prog == nil {
		return nil, false
	}
	p := &c.prog.Probe
	if !p.UserSpace() || p.Kind == probe.Usdt || p.Target == "" {
		return nil, false
	}
	d, err := symbol.DebugInfo(p.Target)
	if err != nil {
		return nil, false
	}
	return d.Type(name)
}

// rawTracepointArgs are a raw tracepoint's arguments, typed by the
// kernel's BTF: the parameters of the function the kernel generates
// for it, after the leading context pointer.
func (c *checker) rawTracepointArgs() ([]*ArgField, error) {
	var fn *btf.Func
	var err error
	for _, prefix := range []string{"__probestub_", "__traceiter_"} {
		if fn, err = c.opts.Func(prefix + c.prog.Probe.Event); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("no BTF for raw tracepoint %s: %w", c.prog.Probe.Event, err)
	}
	proto, ok := fn.Type.(*btf.FuncProto)
	if !ok || len(proto.Params) == 0 {
		return nil, fmt.Errorf("%s has no prototype in the kernel's BTF", fn.Name)
	}
	var fields []*ArgField
	for i, p := range proto.Params[1:] {
		fields = append(fields, &ArgField{Name: p.Name, Offset: 8 * i, Size: 8, Type: fromBTF(p.Type)})
	}
	return fields, nil
}

// symbolPointee is what uaddr()'s pointer points to, as bpftrace types
// it by the symbol's size: a signed integer of 1, 2 or 4 bytes, else
// of 8.
func symbolPointee(size uint64) btf.Type {
	if size != 1 && size != 2 && size != 4 {
		size = 8
	}
	return &btf.Int{Name: fmt.Sprintf("int%d", 8*size), Size: uint32(size), Encoding: btf.Signed}
}

// uaddrBias prepares uaddr() in a uprobe on a position-independent
// file, whose symbols are where the file is loaded plus their link-time
// address: the probe's own link-time address, which the traced ip less
// gives where the file is loaded. A uretprobe's ip is the return
// address, which tells nothing, so its uaddr() stays link-time.
func (c *checker) uaddrBias(e ast.Expr) {
	p := &c.prog.Probe
	if p.Kind != probe.Uprobe && p.Kind != probe.Usdt {
		return
	}
	fn, fileOff := p.Event, uint64(0)
	if p.Kind == probe.Usdt {
		fn, fileOff = "", p.USDT.LocationOffset
	} else if fn == "" {
		// A uprobe at an address: its virtual address, in the file at
		// fileOff.
		off, err := symbol.FileOffset(p.Target, p.Address)
		if err != nil {
			c.errorf(e, "uaddr(): %v", err)
			return
		}
		fileOff = off
	}
	vaddr, pie, err := symbol.ProbeAddress(p.Target, fn, p.Offset, fileOff)
	if err != nil {
		c.errorf(e, "uaddr(): %v", err)
		return
	}
	if pie {
		c.prog.ProbeVaddr = vaddr
	}
}

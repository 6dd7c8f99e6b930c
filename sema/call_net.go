package sema

import (
	"net/netip"
	"strings"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
	"gtrace/lang/token"
	"gtrace/output"
	"gtrace/probe"
)

// MacAddrT is macaddr()'s six bytes, printed as a MAC address.
var MacAddrT = &Type{Kind: MacAddr, Size: 6}

// SkbOutputMax bounds the bytes skboutput() captures of a packet.
const SkbOutputMax = 4096

// netCall checks the kernel and network helpers and the runtime
// messages: pton, macaddr, cgroup_path, percpu_kaddr, socket_cookie,
// skboutput, write_user, reg, errorf, warnf and debugf.
func (c *checker) netCall(call *ast.Call, f Func) *Type {
	args := call.Args
	switch f {
	case FPton:
		return c.pton(call)
	case FMacaddr:
		return c.macaddr(call)
	case FCgroupPath:
		c.wantInt(args[0], c.expr(args[0]))
		t := &Type{Kind: CgroupPath, Size: 8, Format: "*"}
		if len(args) == 2 {
			filter, ok := args[1].(*ast.StrLit)
			if !ok {
				c.errorf(args[1], "cgroup_path() expects a string literal as its filter")
				return nil
			}
			c.expr(filter)
			t.Format = filter.Value
		}
		return t
	case FPercpuKaddr:
		return c.percpuKaddr(call)
	case FSocketCookie:
		t := c.expr(args[0])
		if t.Kind != Pointer || cName(t.BTF) != "struct sock" {
			if t.Kind != Invalid {
				c.errorf(call, "socket_cookie() only supports 'struct sock *' as the argument ('%s' provided)", t)
			}
			return nil
		}
		// Outside of fentry's own arguments, the cookie is read from the
		// socket, where the kernel keeps it (sk->__sk_common.skc_cookie):
		// the helper that makes one takes only pointers the verifier
		// tracks.
		off, ok := c.kernelOffset("struct sock", "__sk_common", "skc_cookie")
		if !ok {
			c.errorf(call, "socket_cookie(): the kernel's struct sock has no __sk_common.skc_cookie")
			return nil
		}
		c.prog.Consts[call] = int64(off)
		return Uint64
	case FSkboutput:
		return c.skboutput(call)
	case FWriteUser:
		if !c.opts.Config.Unsafe {
			c.errorf(call, "write_user() is unsafe. To use you need the --unsafe flag")
			return nil
		}
		c.wantInt(args[0], c.expr(args[0]))
		// The helper copies from the program's own memory only.
		if t := c.expr(args[1]); t.IsScalar() {
			c.errorf(args[1], "write_user() copies a value of the program, such as a string or an array, not '%s'", t)
		}
		c.wantInt(args[2], c.expr(args[2]))
		return BoolT
	case FReg:
		return c.reg(call)
	case FErrorf, FWarnf, FDebugf:
		return c.message(call, f)
	}
	return VoidT
}

// Pton is the address pton() makes of s at compile time: IPv6 when s
// holds a colon, as bpftrace decides, else IPv4; false when s is not an
// address of that family.
func Pton(s string) ([]byte, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return nil, false
	}
	if strings.Contains(s, ":") {
		if !a.Is6() {
			return nil, false
		}
		b := a.As16()
		return b[:], true
	}
	if !a.Is4() {
		return nil, false
	}
	b := a.As4()
	return b[:], true
}

func (c *checker) pton(call *ast.Call) *Type {
	s, ok := call.Args[0].(*ast.StrLit)
	if !ok {
		c.errorf(call.Args[0], "pton() expects a string literal")
		return nil
	}
	c.expr(s)
	b, ok := Pton(s.Value)
	if !ok {
		c.errorf(s, "pton(): %q is not an IPv4 or IPv6 address", s.Value)
		return nil
	}
	return ArrayType(&Type{Kind: Int, Size: 1, Signed: true}, len(b))
}

// macaddr checks macaddr(mac): six bytes of an array or string, or read
// from an address.
func (c *checker) macaddr(call *ast.Call) *Type {
	arg := call.Args[0]
	if _, ok := arg.(*ast.StrLit); ok {
		c.errorf(call, "macaddr() does not support literal string arguments")
		return nil
	}
	t := c.expr(arg)
	switch {
	case t.Kind == Invalid:
		return nil
	case t.Kind == Array || t.Kind == String:
		if t.Size < 6 {
			c.errorf(call, "macaddr() argument must be at least 6 bytes in size")
			return nil
		}
	case !isInt(t):
		c.errorf(call, "macaddr() only supports array or pointer arguments (%s provided)", t)
		return nil
	}
	return MacAddrT
}

// percpuKaddr checks percpu_kaddr(name[, cpu]): name is a per-CPU
// variable of the kernel's BTF, whose id code generation loads.
func (c *checker) percpuKaddr(call *ast.Call) *Type {
	args := call.Args
	name, ok := args[0].(*ast.StrLit)
	if !ok {
		c.errorf(args[0], "percpu_kaddr() expects a string literal")
		return nil
	}
	c.expr(name)
	if len(args) == 2 {
		c.wantInt(args[1], c.expr(args[1]))
	}
	id, err := c.opts.KernelVar(name.Value)
	if err != nil {
		c.errorf(call, "Could not resolve variable \"%s\" from BTF", name.Value)
		return nil
	}
	// The verifier finds the variable's address through kallsyms,
	// which lists variables only in kernels built with
	// CONFIG_KALLSYMS_ALL.
	if _, ok := c.opts.Kaddr(name.Value); !ok {
		c.errorf(call, "percpu_kaddr(): the kernel does not list %s in /proc/kallsyms, where BPF finds its variables (a kernel built without CONFIG_KALLSYMS_ALL lists none)", name.Value)
		return nil
	}
	c.prog.Consts[call] = int64(id)
	return &Type{Kind: Pointer, Size: 8, BTF: &btf.Int{Name: "unsigned long", Size: 8}}
}

// skboutput checks skboutput(path, skb, length, offset): path is a
// literal, the file the packets go to, and offset a constant, the bytes
// left out of each packet's start when it is written.
func (c *checker) skboutput(call *ast.Call) *Type {
	args := call.Args
	if _, ok := args[0].(*ast.StrLit); !ok {
		c.errorf(args[0], "skboutput() expects a string literal as its file")
		return nil
	}
	c.expr(args[0])
	if t := c.expr(args[1]); t.Kind != Pointer && t.Kind != Invalid {
		c.errorf(args[1], "skboutput() expects a pointer to a struct sk_buff, got '%s'", t)
	}
	c.wantInt(args[2], c.expr(args[2]))
	c.expr(args[3])
	if n, ok := c.constInt(args[3]); !ok || n < 0 {
		c.errorf(args[3], "skboutput(): the offset must be a non-negative integer literal")
		return nil
	}
	off, ok := c.kernelOffset("struct sk_buff", "data")
	if !ok {
		c.errorf(call, "skboutput(): the kernel's struct sk_buff has no data field")
		return nil
	}
	c.prog.Consts[call] = int64(off)
	return Uint32
}

// kernelOffset is where the field at path is in the kernel struct
// named record.
func (c *checker) kernelOffset(record string, path ...string) (int, bool) {
	t, err := c.opts.KernelType(record)
	if err != nil {
		return 0, false
	}
	off := 0
	for _, name := range path {
		ft, m, ok := recordField(t, name)
		if !ok {
			return 0, false
		}
		off += m.Offset
		t = ft.BTF
	}
	return off, true
}

// regOffsets are the offsets of x86_64's registers in struct pt_regs,
// by the names bpftrace gives them.
var regOffsets = map[string]int{
	"r15": 0, "r14": 8, "r13": 16, "r12": 24, "bp": 32, "bx": 40,
	"r11": 48, "r10": 56, "r9": 64, "r8": 72, "ax": 80, "cx": 88,
	"dx": 96, "si": 104, "di": 112, "orig_ax": 120, "ip": 128, "pc": 128, "cs": 136,
	"flags": 144, "sp": 152, "ss": 160,
}

// RegOffset is where register name is in struct pt_regs.
func RegOffset(name string) (int, bool) {
	off, ok := regOffsets[name]
	return off, ok
}

// reg checks reg(name): a register of a probe whose context is pt_regs.
func (c *checker) reg(call *ast.Call) *Type {
	name, ok := call.Args[0].(*ast.StrLit)
	if !ok {
		c.errorf(call.Args[0], "reg() expects a string literal")
		return nil
	}
	c.expr(name)
	if _, ok := regOffsets[name.Value]; !ok {
		c.errorf(call, "'%s' is not a valid register on this architecture (x86_64)", name.Value)
		return nil
	}
	if ctx := c.prog.Probe.Context(); ctx != probe.Registers && ctx != probe.USDTArgs {
		c.errorf(call, "reg() can not be used with '%s' probes", c.prog.Probe.Kind)
		return nil
	}
	return Uint64
}

// traceprintkSpecs are the conversions bpf_trace_printk takes, and the
// kind of argument each wants.
var traceprintkSpecs = map[string]Kind{"d": Int, "u": Int, "x": Int, "p": Int, "s": String}

// message checks errorf, warnf and debugf, printf's formats that print
// as a located error or warning, or through bpf_trace_printk.
func (c *checker) message(call *ast.Call, f Func) *Type {
	args := call.Args
	format, ok := args[0].(*ast.StrLit)
	if !ok {
		c.errorf(args[0], "%s() expects a string literal as its first argument", call.Name)
		return VoidT
	}
	c.expr(format)
	types := make([]*Type, 0, len(args)-1)
	for _, a := range args[1:] {
		t := c.expr(a)
		if t.Kind == Void || t.Kind == Agg {
			c.errorf(a, "%s() can not print a value of type '%s'", call.Name, t)
		}
		types = append(types, t)
	}
	c.checkFormat(call, format, types)
	if f != FDebugf {
		// The runtime prints the call's place, and the macro calls it
		// was expanded from.
		c.prog.Expanded[call] = append([]token.Span(nil), c.expansions...)
		return VoidT
	}
	if !c.quiet {
		c.errs.Warn(call.Span(), "The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).")
	}
	if len(types) > 3 {
		c.errorf(call, "cannot use more than 3 conversion specifiers")
		return VoidT
	}
	pf, err := output.ParseFormat(format.Value)
	if err != nil {
		return VoidT
	}
	for i, conv := range pf.Conversions() {
		if i >= len(types) || types[i].Kind == Invalid {
			break
		}
		want, ok := traceprintkSpecs[conv]
		if !ok {
			c.errorf(format, "Invalid format specifier for `debugf`: %s", conv)
			continue
		}
		if got := types[i].Kind; got != want && !(want == Int && isInt(types[i])) {
			c.errorf(args[i+1], "Type does not match format specifier: %s", conv)
		}
	}
	return VoidT
}

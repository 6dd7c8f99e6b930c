package sema

import (
	"encoding/binary"
	"slices"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"gtrace/kernel"
	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// compileTimeCall checks the standard library's helpers answered while
// checking, or standing for a short expression: assert_str,
// default_str_length, is_err, cgroupid, kfunc_exist and kfunc_allowed.
func (c *checker) compileTimeCall(call *ast.Call) *Type {
	args := call.Args
	if call.Name == "default_str_length" {
		if !c.nargs(call, 0, 0) {
			return nil
		}
		c.standsFor(call, &ast.IntLit{At: call.At, Value: uint64(c.opts.Config.MaxStrlen)})
		return Uint64
	}
	if !c.nargs(call, 1, 1) {
		return nil
	}
	switch call.Name {
	case "assert_str":
		c.assertStr(args[0])
		return VoidT
	case "is_err":
		// The kernel's IS_ERR(): an address in the last page, which
		// ERR_PTR makes of an error code.
		at := call.At
		cast := func() ast.Expr {
			return &ast.Cast{At: at, Type: &ast.TypeExpr{At: at, Name: "int64"}, X: args[0]}
		}
		neg := &ast.Binary{At: at, Op: token.LT, X: cast(), Y: &ast.IntLit{At: at}}
		low := &ast.Binary{At: at, Op: token.GE, X: cast(), Y: &ast.Unary{At: at, Op: token.SUB, X: &ast.IntLit{At: at, Value: 4095}}}
		return c.standsFor(call, &ast.Binary{At: at, Op: token.LAND, X: neg, Y: low})
	}
	s, ok := args[0].(*ast.StrLit)
	switch {
	case !ok && call.Name == "cgroupid":
		c.errorf(args[0], "cgroupid() expects a string literal")
		return nil
	case !ok:
		c.errorf(call, "%s() accepts a string literal only", call.Name)
		return nil
	}
	c.expr(s)
	switch call.Name {
	case "cgroupid":
		id, err := cgroupID(s.Value)
		if err != nil {
			c.errorf(call, "Failed to get `cgroupid` for path: %q: %s", s.Value, capitalize(err.Error()))
			return nil
		}
		c.standsFor(call, &ast.IntLit{At: call.At, Value: id})
		return Uint64
	case "kfunc_exist":
		_, err := c.opts.Func(s.Value)
		return c.standsFor(call, &ast.BoolLit{At: call.At, Value: err == nil})
	}
	return c.standsFor(call, &ast.BoolLit{At: call.At, Value: c.kfuncAllowed(s.Value)})
}

// kfuncAllowed reports whether the probe's program may call the kfunc
// name: the kernel refuses a program of a type the kfunc is not allowed
// in, as bpftrace asks it.
func (c *checker) kfuncAllowed(name string) bool {
	_, err := c.opts.Func(name)
	return err == nil && kernel.KfuncAllowed(name, c.prog.Probe.ProgramType())
}

// TaskCommLen is the size of a task's comm, and of the string
// comm(pid) gives.
const TaskCommLen = 16

// comm checks comm() and comm(pid). The latter needs the kfunc
// bpf_task_from_pid, and records where a task keeps its comm.
func (c *checker) comm(call *ast.Call) *Type {
	if len(call.Args) == 0 {
		return c.standsFor(call, &ast.Ident{At: call.At, Name: call.Name})
	}
	pid := call.Args[0]
	if t := c.expr(pid); t.Kind != Int && t.Kind != Invalid {
		c.errorf(pid, "Only integer supported for comm()'s pid")
		return nil
	}
	if !c.kfuncAllowed("bpf_task_from_pid") {
		c.errorf(call, "Syntax comm(PID) is not supported in this probe type yet. Type: %s", Probetype(&c.prog.Probe))
		return nil
	}
	task, err := c.opts.KernelType("struct task_struct")
	if err != nil {
		c.errorf(call, "comm(pid) needs struct task_struct: %s", err)
		return nil
	}
	_, off, ok := member(task, "comm")
	if !ok {
		c.errorf(call, "comm(pid) needs struct task_struct's comm, which this kernel's has not")
		return nil
	}
	c.prog.Consts[call] = int64(off / 8)
	return StringType(TaskCommLen)
}

// assertStr checks that x is string-like: a string, or an array of or a
// pointer to chars, with bpftrace's messages.
func (c *checker) assertStr(x ast.Expr) {
	t := c.expr(x)
	switch t.Kind {
	case String, Invalid:
	case Array:
		if e := t.Elems[0]; e.Kind != Int || e.Size != 1 {
			c.errorf(x, "string-like arrays must contain a char-like type")
		}
	case Pointer:
		if i, ok := btf.UnderlyingType(t.BTF).(*btf.Int); !ok || i.Size != 1 {
			c.errorf(x, "string-like pointers must point to a char-like type")
		}
	default:
		c.errorf(x, "string-like values must be either strings, arrays or pointers")
	}
}

// cgroupID is the id of the cgroup v2 directory at path: the kernel's
// file handle of a cgroup, as bpftrace resolves it.
func cgroupID(path string) (uint64, error) {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, path, 0)
	if err != nil {
		return 0, err
	}
	if b := h.Bytes(); len(b) >= 8 {
		return binary.NativeEndian.Uint64(b), nil
	}
	return 0, unix.EINVAL
}

// signalProbes are the probe types whose programs may send signals, as
// bpftrace lists them.
var signalProbes = []string{"kprobe", "kretprobe", "uprobe", "uretprobe", "usdt", "tracepoint",
	"profile", "fentry", "fexit", "rawtracepoint"}

// stdlib2Func checks find, override, path, signal_thread and unwatch.
func (c *checker) stdlib2Func(call *ast.Call, f Func) *Type {
	args := call.Args
	pt := Probetype(&c.prog.Probe)
	switch f {
	case FFind:
		return c.find(call)
	case FOverride:
		switch {
		case pt != "kprobe":
			c.errorf(call, "override() can only be used inside kprobes")
		case !c.opts.Config.Unsafe:
			c.errorf(call, "override() is unsafe. To use you need the --unsafe flag")
		default:
			if t := c.expr(args[0]); t.Kind != Int && t.Kind != Invalid {
				c.errorf(args[0], "override() only supports int arguments (%s provided)", t)
			}
		}
		return VoidT
	case FSignalThread:
		switch {
		case !slices.Contains(signalProbes, pt):
			c.errorf(call, "signal_thread() can not be used for this probetype %s", pt)
		case !c.opts.Config.Unsafe:
			c.errorf(call, "signal_thread() is unsafe. To use you need the --unsafe flag")
		default:
			c.signalArg(call, args[0])
		}
		return VoidT
	case FUnwatch:
		c.wantInt(args[0], c.expr(args[0]))
		return VoidT
	}
	return c.path(call)
}

// signalArg checks signal_thread()'s signal: a name, a number from 1
// to 64, or an integer checked when the probe runs.
func (c *checker) signalArg(call *ast.Call, x ast.Expr) {
	t := c.expr(x)
	if s, ok := x.(*ast.StrLit); ok {
		if SignalNumber(s.Value) < 1 {
			c.errorf(s, "Invalid string for signal: %s", s.Value)
		}
		return
	}
	if t.Kind != Int && t.Kind != Invalid {
		c.errorf(x, "%s() accepts a string literal or an integer", call.Name)
		return
	}
	if n, ok := c.constInt(x); ok && (n < 1 || n > 64) {
		c.errorf(x, "%s() accepts a string literal or an integer between 1 and 64 (inclusive)", call.Name)
	}
}

// find checks find(@m, key, $v): one lookup of @m[key], which sets $v
// as `$v = @m[key]` would when the key is there.
func (c *checker) find(call *ast.Call) *Type {
	args := call.Args
	m, isMap := args[0].(*ast.Map)
	v, isVar := args[2].(*ast.Var)
	if !isMap || len(m.Keys) > 0 || !isVar {
		// bpftrace's find() is a macro: its arguments are a map and a
		// variable.
		c.errorf(call, "Call to find() has arguments that do not match any definition.")
		if !isMap || len(m.Keys) > 0 {
			c.errorf(args[0], "Mismatched arg. find() expects a map for arg @map but got %s.", argKind(args[0]))
		}
		if !isVar {
			c.errorf(args[2], "Mismatched arg. find() expects a variable for arg $var but got %s.", argKind(args[2]))
		}
		return nil
	}
	mi := c.info.Maps[m.Name]
	if mi != nil && mi.Key == nil && !mi.keyUnknown && mi.Value != nil {
		c.errorf(call, "call to find expects a map with explicit keys (non-scalar map)")
		return nil
	}
	if mi != nil && mi.Value != nil && mi.Value.Kind == Agg {
		c.errorf(args[0], "find() can not read %s, a %s() map: each CPU keeps its own value", m.Name, mi.Value.Agg)
		return nil
	}
	read := &ast.Map{At: m.At, Name: m.Name, Keys: []ast.Expr{args[1]}}
	c.assign(&ast.AssignStmt{At: call.At, LHS: v, Op: token.ASSIGN, RHS: read})
	c.prog.Types[m] = VoidT
	return BoolT
}

// argKind names what a call's argument is, as bpftrace's macro
// mismatches do.
func argKind(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.Var:
		return "a variable"
	case *ast.Map:
		if len(x.Keys) == 0 {
			return "a map"
		}
	}
	return "an expression"
}

// path checks path(p[, size]): the string bpf_d_path makes of a struct
// path, which only fentry, fexit and iter programs may call. A struct path
// rather than a pointer to one stands for path(&p).
func (c *checker) path(call *ast.Call) *Type {
	args := call.Args
	switch pt := Probetype(&c.prog.Probe); {
	case pt == "iter":
		// bpf_d_path takes only a pointer the verifier tracks, and
		// iter probes read their context's pointers as numbers.
		c.errorf(call, "path() is not supported in iter probes: bpf_d_path needs a pointer the verifier tracks; use fentry or fexit")
		return nil
	case pt != "fentry" && pt != "fexit":
		c.errorf(call, "The path function can only be used with 'fentry', 'fexit', 'iter' probes")
		return nil
	}
	size := c.opts.Config.MaxStrlen
	if len(args) == 2 {
		n, ok := args[1].(*ast.IntLit)
		if !ok {
			c.errorf(call, "path: invalid size value, need non-negative literal")
			return nil
		}
		if n.Value == 0 {
			c.errorf(args[1], "path: the size must be at least 1")
			return nil
		}
		c.expr(n)
		size = int(min(n.Value, uint64(size)))
	}
	t := c.expr(args[0])
	switch t.Kind {
	case Pointer:
		return StringType(size)
	case Record:
		addr := &ast.Unary{At: call.At, Op: token.AND, X: args[0]}
		x := &ast.Call{At: call.At, Name: call.Name, Args: append([]ast.Expr{addr}, args[1:]...)}
		return c.standsFor(call, x)
	case Invalid:
		return nil
	}
	c.errorf(call, "path() only supports pointer or C type argument (%s provided)", t)
	return nil
}

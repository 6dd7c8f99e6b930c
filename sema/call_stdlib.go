package sema

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/token"
	"gtrace/probe"
)

// The helpers of bpftrace's standard library that are other expressions
// written shorter: bpftrace defines them as macros, gtrace checks the
// expression each stands for (Prog.Stands), which code generation then
// generates in its place.

// stdlibNames are the helpers stdlibCall checks.
var stdlibNames = []string{"kptr", "uptr", "container_of", "is_array", "is_integer", "is_literal",
	"is_ptr", "is_str", "is_unsigned_integer", "strcap", "has_cpid", "static_assert", "fail",
	"assert_str", "cgroupid", "default_str_length", "is_err", "kfunc_allowed", "kfunc_exist"}

// The macro expander leaves a call that no macro of the script matches
// to the function of its name.
func init() {
	builtin.DeclareFuncs(FuncNames()...)
	builtin.DeclareFuncs(stdlibNames...)
}

// stdlibCall checks a call of a standard library helper that no entry
// of the function table implements; ok is false for any other name.
func (c *checker) stdlibCall(call *ast.Call) (*Type, bool) {
	args := call.Args
	if b := lookupBuiltin(call.Name); b != builtin.None {
		return c.builtinCall(call, b), true
	}
	switch call.Name {
	case "kptr", "uptr":
		if !c.nargs(call, 1, 1) {
			return nil, true
		}
		// x86_64 reads kernel and user memory alike: the address space
		// changes nothing.
		t := c.expr(args[0])
		c.wantInt(args[0], t)
		c.prog.Stands[call] = args[0]
		return t, true
	case "container_of":
		return c.containerOf(call), true
	case "is_array", "is_integer", "is_literal", "is_ptr", "is_str", "is_unsigned_integer":
		if !c.nargs(call, 1, 1) {
			return nil, true
		}
		return c.standsFor(call, &ast.BoolLit{At: call.At, Value: c.typePredicate(call.Name, args[0])}), true
	case "strcap":
		return c.strcap(call), true
	case "has_cpid":
		if !c.nargs(call, 0, 0) {
			return nil, true
		}
		cpid := &ast.Ident{At: call.At, Name: "cpid"}
		return c.standsFor(call, &ast.Binary{At: call.At, Op: token.NE, X: cpid, Y: &ast.IntLit{At: call.At}}), true
	case "static_assert":
		if !c.nargs(call, 2, 2) {
			return nil, true
		}
		c.expr(args[0])
		msg, isStr := args[1].(*ast.StrLit)
		v, isConst := c.constBool(args[0])
		switch {
		case !isStr:
			c.errorf(args[1], "static_assert() expects a string literal as its message")
		case !isConst:
			c.errorf(args[0], "static_assert() expects a condition known at compile time")
		case !v:
			c.errorf(call, "%s", msg.Value)
		}
		return VoidT, true
	case "fail":
		c.fail(call)
		return VoidT, true
	case "assert_str", "cgroupid", "default_str_length", "is_err", "kfunc_allowed", "kfunc_exist":
		return c.compileTimeCall(call), true
	}
	return nil, false
}

// stdlibIdent checks a bare name that is a standard library helper
// taking no arguments, such as has_cpid, as its call.
func (c *checker) stdlibIdent(e *ast.Ident) (*Type, bool) {
	if e.Name != "has_cpid" {
		return nil, false
	}
	call := &ast.Call{At: e.At, Name: e.Name}
	c.prog.Stands[e] = call
	return c.expr(call), true
}

// nargs reports whether call has from min to max arguments, with an
// error when not.
func (c *checker) nargs(call *ast.Call, min, max int) bool {
	n := len(call.Args)
	switch {
	case n >= min && n <= max:
		return true
	case min == max:
		c.errorf(call, "%s() requires %d arguments (%d provided)", call.Name, min, n)
	default:
		c.errorf(call, "%s() requires %d to %d arguments (%d provided)", call.Name, min, max, n)
	}
	return false
}

// standsFor records that call stands for x, and checks x.
func (c *checker) standsFor(call *ast.Call, x ast.Expr) *Type {
	c.prog.Stands[call] = x
	return c.expr(x)
}

// builtinCall checks a builtin variable called as a function, such as
// cpu(); and those that take a task: ppid(t), pcomm(t), leader_tid(t),
// leader_comm(t).
func (c *checker) builtinCall(call *ast.Call, b Builtin) *Type {
	args := call.Args
	if len(args) == 0 {
		id := &ast.Ident{At: call.At, Name: call.Name}
		c.prog.Stands[call] = id
		return c.expr(id)
	}
	if !c.nargs(call, 0, 1) {
		return nil
	}
	var field []string
	switch b {
	case builtin.Ppid:
		field = []string{"real_parent", "pid"}
	case builtin.Pcomm:
		field = []string{"real_parent", "comm"}
	case builtin.LeaderTid:
		field = []string{"group_leader", "pid"}
	case builtin.LeaderComm:
		field = []string{"group_leader", "comm"}
	default:
		c.errorf(call, "%s() takes no arguments", call.Name)
		return nil
	}
	return c.taskField(call, args[0], field)
}

// taskField checks task->f0->f1 for a call such as ppid(task), with
// pids cast to uint32 as the builtins have them.
func (c *checker) taskField(call *ast.Call, task ast.Expr, field []string) *Type {
	t := c.expr(task)
	if t.Kind == Invalid {
		return nil
	}
	if t.Kind != Pointer && t.Kind != Int {
		c.errorf(task, "%s() expects a struct task_struct *, got '%s'", call.Name, t)
		return nil
	}
	var x ast.Expr = task
	if t.Kind == Int {
		x = &ast.Cast{At: call.At, Type: &ast.TypeExpr{At: call.At, Name: "struct task_struct", Ptr: 1}, X: task}
	}
	for _, f := range field {
		x = &ast.Field{At: call.At, Arrow: true, Name: f, X: x}
	}
	if field[1] == "pid" {
		x = &ast.Cast{At: call.At, Type: &ast.TypeExpr{At: call.At, Name: "uint32"}, X: x}
	}
	c.prog.Stands[call] = x
	return c.expr(x)
}

// containerOf checks container_of(ptr, type, member): the address of
// the type holding *ptr as its member, (type *)((uint64)ptr -
// offsetof(type, member)).
func (c *checker) containerOf(call *ast.Call) *Type {
	if !c.nargs(call, 3, 3) {
		return nil
	}
	args := call.Args
	te, ok := args[1].(*ast.TypeExpr)
	if ok && te.OfType != nil {
		te = te.OfType
	}
	if !ok || te.Ptr > 0 || !isCompositeName(te.Name) {
		c.errorf(args[1], "container_of() expects a struct or union type, such as typeof(struct task_struct)")
		return nil
	}
	var fields []string
	for m := args[2]; m != nil; {
		switch x := m.(type) {
		case *ast.Ident:
			fields, m = append([]string{x.Name}, fields...), nil
		case *ast.Field:
			fields, m = append([]string{x.Name}, fields...), x.X
		default:
			c.errorf(args[2], "container_of() expects a member name, such as list")
			return nil
		}
	}
	c.prog.Types[args[1]], c.prog.Types[args[2]] = VoidT, VoidT
	at := call.At
	ptr := &ast.Cast{At: at, Type: &ast.TypeExpr{At: at, Name: "uint64"}, X: args[0]}
	off := &ast.Offsetof{At: at, Type: &ast.TypeExpr{At: te.At, Name: te.Name}, Field: fields}
	ptrType := &ast.TypeExpr{At: te.At, Name: te.Name, Ptr: 1}
	x := &ast.Cast{At: at, Type: ptrType, X: &ast.Binary{At: at, Op: token.SUB, X: ptr, Y: off}}
	c.prog.Stands[call] = x
	return c.expr(x)
}

// typePredicate answers is_array(x), is_str(x) and the others from x's
// type, which is checked but never run.
func (c *checker) typePredicate(name string, x ast.Expr) bool {
	if name == "is_literal" {
		switch x := x.(type) {
		case *ast.IntLit, *ast.StrLit, *ast.BoolLit:
			return true
		case *ast.Unary: // -1
			_, ok := x.X.(*ast.IntLit)
			return ok && x.Op == token.SUB
		}
		return false
	}
	t := c.expr(x)
	switch name {
	case "is_array":
		return t.Kind == Array
	case "is_integer":
		return t.Kind == Int
	case "is_ptr":
		return t.Kind == Pointer
	case "is_str":
		return t.Kind == String
	}
	return t.Kind == Int && !t.Signed && !t.Flex // is_unsigned_integer
}

// strcap checks strcap(s): the bytes a string or array holds, known at
// compile time.
func (c *checker) strcap(call *ast.Call) *Type {
	if !c.nargs(call, 1, 1) {
		return nil
	}
	t := c.expr(call.Args[0])
	// strcap() is an int64, not its literal's smallest type.
	switch {
	case t.Kind == String:
		c.standsFor(call, &ast.IntLit{At: call.At, Value: uint64(t.Size)})
		return Int64
	case t.Kind == Array && t.Elems[0].Size == 1:
		c.standsFor(call, &ast.IntLit{At: call.At, Value: uint64(t.Len)})
		return Int64
	case t.Kind != Invalid:
		c.errorf(call.Args[0], "strcap() expects a string or an array of chars, got '%s'", t)
	}
	return nil
}

// constBool evaluates a condition known at compile time: literals,
// helpers that stand for them (is_str(x)), !, && and ||, and comparisons
// of integer constants.
func (c *checker) constBool(e ast.Expr) (bool, bool) {
	if x := c.prog.Stands[e]; x != nil {
		return c.constBool(x)
	}
	switch e := e.(type) {
	case *ast.BoolLit:
		return e.Value, true
	case *ast.Unary:
		if e.Op == token.NOT {
			v, ok := c.constBool(e.X)
			return !v, ok
		}
	case *ast.Binary:
		switch e.Op {
		case token.LAND, token.LOR:
			a, ok1 := c.constBool(e.X)
			b, ok2 := c.constBool(e.Y)
			if e.Op == token.LAND {
				return a && b, ok1 && ok2
			}
			return a || b, ok1 && ok2
		case token.EQ, token.NE:
			a, ok1 := c.constInt(e.X)
			b, ok2 := c.constInt(e.Y)
			return (a == b) == (e.Op == token.EQ), ok1 && ok2
		}
	}
	v, ok := c.constInt(e)
	return v != 0, ok
}

// fail checks fail(fmt, args...): an error at the call, its message
// formatted from literals at compile time.
func (c *checker) fail(call *ast.Call) {
	if len(call.Args) == 0 {
		c.errorf(call, "fail() requires at least 1 argument (0 provided)")
		return
	}
	format, ok := call.Args[0].(*ast.StrLit)
	if !ok {
		c.errorf(call.Args[0], "fail() expects a string literal as its format")
		return
	}
	var vals []any
	for _, a := range call.Args[1:] {
		switch a := a.(type) {
		case *ast.StrLit:
			vals = append(vals, a.Value)
		case *ast.BoolLit:
			vals = append(vals, a.Value)
		default:
			v, ok := c.constInt(a)
			if !ok {
				c.errorf(a, "fail() expects literals as its arguments")
				return
			}
			vals = append(vals, v)
		}
	}
	c.errorf(call, "%s", strings.TrimSuffix(fmt.Sprintf(format.Value, vals...), "\n"))
}

// stdlibBuiltin checks the builtin variables of bpftrace's standard
// library: ctx, username, usermode, probetype, leader_comm, leader_tid.
func (c *checker) stdlibBuiltin(e *ast.Ident, b Builtin) *Type {
	switch b {
	case builtin.Ctx:
		if c.prog.Probe.Kind == probe.Iter {
			return c.iterCtx(e)
		}
		return &Type{Kind: Pointer, Size: 8, BTF: &btf.Void{}}
	case builtin.Username:
		return usernameType()
	case builtin.Probetype:
		return StringType(len(Probetype(&c.prog.Probe)) + 1)
	case builtin.LeaderComm, builtin.LeaderTid:
		call := &ast.Call{At: e.At, Name: e.Name, Args: []ast.Expr{&ast.Ident{At: e.At, Name: "curtask"}}}
		if _, err := c.lookupType("struct task_struct"); err != nil {
			c.errorf(e, "%s reads struct task_struct, which needs the kernel's BTF: %v", e.Name, err)
			return nil
		}
		c.prog.Stands[e] = call
		return c.expr(call)
	}
	return builtins[b].typ
}

// Probetype is the probetype builtin of p's programs: its provider's
// name, "special" for begin and end as in bpftrace.
func Probetype(p *probe.Probe) string {
	if p.Kind == probe.Begin || p.Kind == probe.End {
		return "special"
	}
	return p.Kind.String()
}

// usernameType is username's: the uid, printed as the user's name. The
// names are the password database's at compile time, an enum's names.
var usernameType = sync.OnceValue(func() *Type {
	e := &btf.Enum{Name: "username", Size: 4}
	data, _ := os.ReadFile("/etc/passwd") // no names without it: uids print
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 3 {
			continue
		}
		if uid, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			e.Values = append(e.Values, btf.EnumValue{Name: f[0], Value: uid})
		}
	}
	return &Type{Kind: Int, Size: 4, Enum: e}
})

// PidNamespaces are the namespaces pid() and tid() take: the one gtrace
// runs in, the default, and the initial one.
var PidNamespaces = []string{"curr_ns", "init"}

// StrerrorSize is the size of strerror(), signal_name() and
// syscall_name() strings.
const StrerrorSize = 64

// stdlibFunc checks the standard library's functions that code
// generation implements.
func (c *checker) stdlibFunc(call *ast.Call, f Func) *Type {
	args := call.Args
	switch f {
	case FComm:
		return c.comm(call)
	case FPid, FTid:
		if len(args) == 1 {
			id, ok := args[0].(*ast.Ident)
			if !ok {
				c.errorf(call, "%s() only supports curr_ns and init as the argument", call.Name)
				return nil
			}
			if !slices.Contains(PidNamespaces, id.Name) {
				c.errorf(id, "Invalid PID namespace mode: %s (expects: curr_ns or init)", id.Name)
				return nil
			}
			c.prog.Types[id] = VoidT
		}
		return Uint32
	case FStrlen:
		t := c.expr(args[0])
		if t.Kind == Int || t.Kind == Pointer {
			// A char pointer is read as str() reads it.
			s := &ast.Call{At: call.At, Name: "str", Args: args}
			return c.standsFor(call, &ast.Call{At: call.At, Name: call.Name, Args: []ast.Expr{s}})
		}
		c.wantString(call, args[0], t)
		return Uint64
	case FStrerror, FSignalName, FSyscallName:
		c.wantInt(args[0], c.expr(args[0]))
		return StringType(StrerrorSize)
	case FStrstr, FStrConcat:
		a, b := c.expr(args[0]), c.expr(args[1])
		c.wantString(call, args[0], a)
		c.wantString(call, args[1], b)
		if f == FStrstr {
			return Int64
		}
		if a.Kind == Invalid || b.Kind == Invalid {
			return nil
		}
		return StringType(a.Size + b.Size)
	case FMemcmp:
		for _, a := range args[:2] {
			if t := c.expr(a); t.Kind == Void || t.Kind == Agg {
				c.errorf(a, "memcmp() can not compare a value of type '%s'", t)
			}
		}
		c.wantInt(args[2], c.expr(args[2]))
		return Int64
	case FAssert:
		c.wantInt(args[0], c.expr(args[0]))
		if _, ok := args[1].(*ast.StrLit); !ok {
			c.errorf(args[1], "assert() expects a string literal as its message")
		}
		c.expr(args[1])
		return VoidT
	}
	return nil
}

// wantString reports a string-like argument that is not: a string or
// an array of chars.
func (c *checker) wantString(call *ast.Call, a ast.Expr, t *Type) {
	if t.Kind == String || t.Kind == Invalid || t.Kind == Array && t.Elems[0].Size == 1 {
		return
	}
	c.errorf(a, "%s() expects a string, got '%s'", call.Name, t)
}

// offsetofBase is the struct or union offsetof(T, f) or offsetof(expr,
// f) looks into, and its name; expr is typed, never run.
func (c *checker) offsetofBase(e *ast.Offsetof) (btf.Type, string, bool) {
	if e.Type == nil && e.X != nil {
		t := c.expr(e.X)
		if t.Kind == Record && t.BTF != nil {
			return btf.UnderlyingType(t.BTF), t.String(), true
		}
		if t.Kind == Invalid {
			return nil, "", false
		}
	}
	if e.Type == nil || e.Type.Ptr > 0 || !isCompositeName(e.Type.Name) {
		c.errorf(e, "offsetof() expects a struct or union type, such as offsetof(struct task_struct, pid)")
		return nil, "", false
	}
	t, err := c.lookupType(e.Type.Name)
	if err != nil {
		c.errorf(e.Type, "%v", err)
		return nil, "", false
	}
	return t, e.Type.Name, true
}

package codegen

import (
	"github.com/cilium/ebpf/asm"
	"slices"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/sema"
)

// scalar evaluates an integer-like expression into R0.
func (g *gen) scalar(e ast.Expr) {
	t := g.typ(e)
	if t == nil || !t.IsScalar() {
		g.fail(e, "expected an integer expression, got %v", t)
		return
	}
	if x := g.prog.Stands[e]; x != nil {
		g.scalar(x)
		return
	}
	switch e := e.(type) {
	case *ast.IntLit:
		g.loadImm(asm.R0, int64(e.Value))
	case *ast.BoolLit:
		v := int64(0)
		if e.Value {
			v = 1
		}
		g.loadImm(asm.R0, v)
	case *ast.Positional:
		g.loadImm(asm.R0, g.constInt(e))
	case *ast.Ident:
		if v, ok := g.prog.Consts[e]; ok {
			g.loadImm(asm.R0, v) // a kernel enum value
			return
		}
		g.builtin(e)
	case *ast.Var:
		g.emit(asm.LoadMem(asm.R0, g.frame, int16(g.varOffset(g.prog.Vars[e])), asm.DWord))
	case *ast.Map:
		if g.out.Maps[e.Name].Value.Kind == sema.Agg {
			g.aggValue(e)
			return
		}
		g.mapRead(e, -1)
	case *ast.Call:
		g.scalarCall(e)
	case *ast.Binary:
		g.binary(e)
	case *ast.Unary:
		if e.Op == token.MUL {
			g.readScalar(e, t)
			return
		}
		if e.Op == token.AND {
			g.address(e.X)
			return
		}
		g.scalar(e.X)
		switch e.Op {
		case token.NOT:
			g.boolify(asm.JEq)
		case token.BNOT:
			g.emit(asm.Xor.Imm(asm.R0, -1))
		case token.SUB:
			g.emit(asm.Neg.Imm(asm.R0, 0))
		}
	case *ast.IncDec:
		g.incDec(e)
	case *ast.Ternary:
		if e.Then == nil { // c ?: e
			end := g.newLabel()
			g.scalar(e.Cond)
			g.emit(asm.JNE.Imm(asm.R0, 0, end))
			g.scalar(e.Else)
			g.place(end)
			return
		}
		g.ternary(e, g.scalar)
	case *ast.Field:
		if f := g.prog.Args[e]; f != nil && f.From != sema.FromRecord {
			g.syscallField(f)
			return
		}
		if f := g.prog.Args[e]; f != nil {
			g.emit(asm.LoadMem(asm.R0, regCtx, int16(f.Offset), sizeOf(f.Size)))
			if f.Size > f.Type.Size {
				g.truncate(f.Type) // an fentry argument in a 64-bit slot
			} else {
				g.extend(f.Type)
			}
			return
		}
		if g.inKernel(e) {
			g.readScalar(e, t)
			return
		}
		xt := g.typ(e.X)
		off := g.composite(e.X, -1)
		if xt.Kind == sema.Record {
			// A field of a struct already copied to scratch.
			m := g.prog.Members[e]
			g.emit(asm.LoadMem(asm.R0, regScratch, int16(off+m.Offset), sizeOf(t.Size)))
			g.extend(t)
			return
		}
		g.emit(asm.LoadMem(asm.R0, regScratch, int16(off+xt.Offsets()[xt.FieldIndex(e.Name)]), storeSize(t)))
		g.extend(t)
	case *ast.Index:
		if g.inKernel(e) {
			g.readScalar(e, t)
			return
		}
		g.indexScalar(e, t)
	case *ast.Cast:
		if xt := g.typ(e.X); xt.Kind == sema.Array {
			// The array's bytes read as one integer of their size.
			src := g.composite(e.X, -1)
			g.emit(asm.LoadMem(asm.R0, regScratch, int16(src), sizeOf(t.Size)))
		} else {
			g.scalar(e.X)
		}
		if xt := g.typ(e.X); t.Kind == sema.Pointer && xt.Kind == sema.Int {
			// An address is an integer's bits, zero-extended as in
			// bpftrace: (uint8 *)-1 is 0xff.
			g.truncate(sema.IntType(xt.Size, false))
		}
		g.truncate(t)
	case *ast.Sizeof, *ast.Offsetof:
		g.loadImm(asm.R0, g.prog.Consts[e])
	case *ast.BlockExpr:
		g.blockScalar(e)
	default:
		g.fail(e, "unsupported expression %T", e)
	}
}

// Offsets in x86_64's struct pt_regs, the probe.Registers context: the
// registers that carry the first six arguments, and the return value.
var ptRegsArgs = [6]int16{112, 104, 96, 88, 72, 64} // di, si, dx, cx, r8, r9

const ptRegsAX = 80

// storePid stores the current process id at scratch offset dst, as
// gtrace's pid namespace sees it, so that its maps can be read.
func (g *gen) storePid(dst int) {
	g.pidTid(false, false)
	g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord))
}

// asField is e as a field access, or nil.
func asField(e ast.Expr) *ast.Field {
	f, _ := e.(*ast.Field)
	return f
}

func sizeOf(n int) asm.Size {
	switch n {
	case 1:
		return asm.Byte
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

// extend sign-extends R0 from t's width to 64 bits when t is signed.
func (g *gen) extend(t *sema.Type) {
	if t.Kind == sema.Int && t.Signed && t.Size < 8 {
		sh := int32(64 - 8*t.Size)
		g.emit(asm.LSh.Imm(asm.R0, sh), asm.ArSh.Imm(asm.R0, sh))
	}
}

// truncate cuts R0 to t's width, then sign-extends it back if t is signed.
func (g *gen) truncate(t *sema.Type) {
	if t.Kind == sema.Bool {
		g.boolify(asm.JNE)
		return
	}
	if t.Kind != sema.Int || t.Size >= 8 {
		return
	}
	sh := int32(64 - 8*t.Size)
	g.emit(asm.LSh.Imm(asm.R0, sh))
	if t.Signed {
		g.emit(asm.ArSh.Imm(asm.R0, sh))
	} else {
		g.emit(asm.RSh.Imm(asm.R0, sh))
	}
}

// boolify sets R0 to 1 when `R0 op 0` holds, else to 0.
func (g *gen) boolify(op asm.JumpOp) {
	yes, end := g.newLabel(), g.newLabel()
	g.emit(op.Imm(asm.R0, 0, yes), asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(end))
	g.place(yes)
	g.emit(asm.Mov.Imm(asm.R0, 1))
	g.place(end)
}

var aluOps = map[token.Kind]asm.ALUOp{
	token.ADD: asm.Add, token.SUB: asm.Sub, token.MUL: asm.Mul, token.DIV: asm.Div,
	token.MOD: asm.Mod, token.AND: asm.And, token.OR: asm.Or, token.XOR: asm.Xor,
	token.SHL: asm.LSh, token.SHR: asm.RSh,
}

func (g *gen) binary(e *ast.Binary) {
	switch e.Op {
	case token.LAND, token.LOR:
		// Short-circuit: the right side runs only when it decides.
		end, short := g.newLabel(), g.newLabel()
		g.scalar(e.X)
		if e.Op == token.LAND {
			g.emit(asm.JEq.Imm(asm.R0, 0, short))
		} else {
			g.emit(asm.JNE.Imm(asm.R0, 0, short))
		}
		g.scalar(e.Y)
		g.boolify(asm.JNE)
		g.emit(asm.Ja.Label(end))
		g.place(short)
		if e.Op == token.LAND {
			g.emit(asm.Mov.Imm(asm.R0, 0))
		} else {
			g.emit(asm.Mov.Imm(asm.R0, 1))
		}
		g.place(end)
		return
	}
	xt, yt := g.typ(e.X), g.typ(e.Y)
	if xt.Kind == sema.String {
		g.stringCompare(e)
		return
	}
	if xt.Kind == sema.Buffer || xt.Kind == sema.Array {
		g.bytesCompare(e)
		return
	}
	// R0 = X, R1 = Y.
	g.scalar(e.X)
	slot := g.pushSlot()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
	g.scalar(e.Y)
	g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord))
	g.popSlot()
	signed := sema.Signed(xt, yt)
	if _, ok := aluOps[e.Op]; ok {
		g.scalePointer(e.Op, xt, yt)
		g.applyOp(e.Op, signed, e)
		return
	}
	var jop asm.JumpOp
	switch e.Op {
	case token.EQ:
		jop = asm.JEq
	case token.NE:
		jop = asm.JNE
	case token.LT:
		jop = pick(signed, asm.JSLT, asm.JLT)
	case token.LE:
		jop = pick(signed, asm.JSLE, asm.JLE)
	case token.GT:
		jop = pick(signed, asm.JSGT, asm.JGT)
	case token.GE:
		jop = pick(signed, asm.JSGE, asm.JGE)
	}
	yes, end := g.newLabel(), g.newLabel()
	g.emit(jop.Reg(asm.R0, asm.R1, yes), asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(end))
	g.place(yes)
	g.emit(asm.Mov.Imm(asm.R0, 1))
	g.place(end)
}

// scalePointer turns the integer side of pointer arithmetic, in R0 or R1,
// into bytes: p + n moves n elements.
func (g *gen) scalePointer(op token.Kind, xt, yt *sema.Type) {
	if op != token.ADD && op != token.SUB {
		return
	}
	switch {
	case xt.Kind == sema.Pointer && yt.Kind != sema.Pointer:
		if n := sema.PointeeSize(xt); n != 1 {
			g.emit(asm.Mul.Imm(asm.R1, int32(n)))
		}
	case yt.Kind == sema.Pointer && xt.Kind != sema.Pointer && op == token.ADD:
		if n := sema.PointeeSize(yt); n != 1 {
			g.emit(asm.Mul.Imm(asm.R0, int32(n)))
		}
	}
}

func pick(signed bool, s, u asm.JumpOp) asm.JumpOp {
	if signed {
		return s
	}
	return u
}

// stringCompare sets R0 to the truth of a == or != between strings: the
// bytes up to and including the first NUL must match.
// bytesCompare sets R0 to the truth of a == or != between arrays or
// buffers: the same bytes, a buffer's length first. buf() zeroes the
// bytes past its length, so the bytes both buffers have can all be
// compared.
func (g *gen) bytesCompare(e *ast.Binary) {
	a := g.composite(e.X, -1)
	b := g.composite(e.Y, -1)
	n := min(g.typ(e.X).Size, g.typ(e.Y).Size)
	differ, end := g.newLabel(), g.newLabel()
	for i := 0; i < n; {
		size, step := chunk(n-i, a+i, b+i)
		g.emit(
			asm.LoadMem(asm.R1, regScratch, int16(a+i), size),
			asm.LoadMem(asm.R2, regScratch, int16(b+i), size),
			asm.JNE.Reg(asm.R1, asm.R2, differ),
		)
		i += step
	}
	eq, ne := int32(1), int32(0)
	if e.Op == token.NE {
		eq, ne = 0, 1
	}
	g.emit(asm.Mov.Imm(asm.R0, eq), asm.Ja.Label(end))
	g.place(differ)
	g.emit(asm.Mov.Imm(asm.R0, ne))
	g.place(end)
}

func (g *gen) stringCompare(e *ast.Binary) {
	a := g.composite(e.X, -1)
	b := g.composite(e.Y, -1)
	n := min(g.typ(e.X).Size, g.typ(e.Y).Size)
	differ, same, end := g.newLabel(), g.newLabel(), g.newLabel()
	for i := 0; i < n; i++ {
		g.emit(
			asm.LoadMem(asm.R1, regScratch, int16(a+i), asm.Byte),
			asm.LoadMem(asm.R2, regScratch, int16(b+i), asm.Byte),
			asm.JNE.Reg(asm.R1, asm.R2, differ),
			asm.JEq.Imm(asm.R1, 0, same),
		)
	}
	// All n bytes matched with no NUL: equal only if both end here.
	la, lb := g.typ(e.X).Size, g.typ(e.Y).Size
	switch {
	case la > n:
		g.emit(asm.LoadMem(asm.R1, regScratch, int16(a+n), asm.Byte), asm.JNE.Imm(asm.R1, 0, differ))
	case lb > n:
		g.emit(asm.LoadMem(asm.R1, regScratch, int16(b+n), asm.Byte), asm.JNE.Imm(asm.R1, 0, differ))
	}
	eq, ne := int32(1), int32(0)
	if e.Op == token.NE {
		eq, ne = 0, 1
	}
	g.place(same)
	g.emit(asm.Mov.Imm(asm.R0, eq), asm.Ja.Label(end))
	g.place(differ)
	g.emit(asm.Mov.Imm(asm.R0, ne))
	g.place(end)
}

// builtin evaluates a scalar builtin variable into R0.
func (g *gen) builtin(e *ast.Ident) {
	switch g.prog.Builtins[e] {
	case builtin.Pid, builtin.Tid:
		g.pidTid(g.prog.Builtins[e] == builtin.Tid, false)
	case builtin.Ctx, builtin.Username, builtin.Usermode:
		g.stdlibBuiltin(e)
	case builtin.Uid:
		g.emit(asm.FnGetCurrentUidGid.Call(), asm.LSh.Imm(asm.R0, 32), asm.RSh.Imm(asm.R0, 32))
	case builtin.Gid:
		g.emit(asm.FnGetCurrentUidGid.Call(), asm.RSh.Imm(asm.R0, 32))
	case builtin.Nsecs:
		g.emit(asm.FnKtimeGetBootNs.Call())
	case builtin.Elapsed:
		end := g.newLabel()
		g.lookupIndex(mapGlobals, 0, end) // R0 is 0 when missing
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, globalStartNs, asm.DWord),
			asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
			asm.FnKtimeGetNs.Call(),
			asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
			asm.Sub.Reg(asm.R0, asm.R1),
		)
		g.place(end)
	case builtin.CPU:
		g.emit(asm.FnGetSmpProcessorId.Call())
	case builtin.Ncpus:
		// The possible CPUs, as bpftrace counts them: cpu is always
		// below ncpus, and per-CPU maps have as many values.
		g.loadImm(asm.R0, int64(g.opts.NumCPU))
	case builtin.Kstack:
		g.stackID(g.typ(e), 0)
	case builtin.Func:
		// A kprobe's func: an address in the function it entered, which
		// user space prints by name. An entry probe reads its
		// instruction pointer, as bpftrace does: bpf_get_func_ip gives 0
		// for a probe at an offset; a kretprobe fires after the return,
		// where only the helper knows the function.
		if g.prog.Probe.Kind == probe.Kprobe {
			g.emit(asm.LoadMem(asm.R0, regCtx, ptRegsIP, asm.DWord))
			break
		}
		g.emit(asm.Mov.Reg(asm.R1, regCtx), asm.FnGetFuncIp.Call())
	case builtin.Curtask:
		g.emit(asm.FnGetCurrentTask.Call())
	case builtin.Cgroup:
		g.emit(asm.FnGetCurrentCgroupId.Call())
	case builtin.Rand:
		g.emit(asm.FnGetPrandomU32.Call())
	case builtin.Cpid:
		g.loadImm(asm.R0, int64(g.opts.Cpid))
	case builtin.Numaid:
		g.emit(asm.FnGetNumaNodeId.Call())
	case builtin.Jiffies:
		g.emit(asm.FnJiffies64.Call())
	case builtin.ArgN:
		n, _ := sema.ArgIndex(e.Name)
		switch ctx := g.prog.Probe.Context(); ctx {
		case probe.USDTArgs:
			g.usdtArg(e, n)
		case probe.Registers:
			g.emit(asm.LoadMem(asm.R0, regCtx, ptRegsArgs[n], asm.DWord))
		case probe.RawArgs:
			g.emit(asm.LoadMem(asm.R0, regCtx, int16(8*n), asm.DWord))
		default:
			g.fail(e, "%s has no arguments in context %d", e.Name, ctx)
		}
	case builtin.Retval:
		switch ctx := g.prog.Probe.Context(); ctx {
		case probe.BTFArgs:
			r := g.prog.Retval
			g.emit(asm.LoadMem(asm.R0, regCtx, int16(r.Offset), asm.DWord))
			g.truncate(r.Type)
		case probe.Registers:
			g.emit(asm.LoadMem(asm.R0, regCtx, ptRegsAX, asm.DWord))
		default:
			g.fail(e, "retval has no value in context %d", ctx)
		}
	default:
		g.fail(e, "builtin %s has no integer value", e.Name)
	}
}

// composite evaluates a string, tuple or other in-memory value into the
// scratch area at dst, or at a new place when dst < 0, and returns where.
// The value always fills its type's whole size: strings are zero padded,
// so that equal values hash alike as map keys.
func (g *gen) composite(e ast.Expr, dst int) int {
	if x := g.prog.Stands[e]; x != nil {
		return g.composite(x, dst)
	}
	t := g.typ(e)
	if t.IsScalar() {
		if dst < 0 {
			dst = g.alloc(8)
		}
		g.scalar(e)
		g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord))
		return dst
	}
	if dst < 0 {
		dst = g.alloc(t.Size)
	}
	if g.inKernel(e) {
		g.readInto(e, t, dst)
		return dst
	}
	switch e := e.(type) {
	case *ast.StrLit:
		g.storeBytes(dst, []byte(e.Value), t.Size)
	case *ast.Ident:
		switch g.prog.Builtins[e] {
		case builtin.Comm:
			// Zeroed first, as bpftrace does: on some kernels (6.1)
			// the helper copies up to the NUL and leaves the bytes
			// after it as they were, and a map keyed by comm would
			// hold one name under keys that differ past its end.
			g.zeroMem(regScratch, dst, t.Size)
			g.scratchPtr(asm.R1, dst)
			g.emit(asm.Mov.Imm(asm.R2, int32(t.Size)), asm.FnGetCurrentComm.Call())
		case builtin.Probe, builtin.Func:
			b := g.prog.Builtins[e]
			if g.prog.Probe.Funcs != nil {
				g.multiName(b == builtin.Func, dst, t.Size)
				break
			}
			name := g.prog.Probe.Name
			if b == builtin.Func {
				name = g.prog.Probe.Func()
			}
			g.storeBytes(dst, []byte(name), t.Size)
		case builtin.Ustack:
			g.userStack(t, dst)
		case builtin.DwUstack:
			g.dwUserStack(t, e, dst)
		case builtin.Probetype:
			g.storeBytes(dst, []byte(sema.Probetype(&g.prog.Probe)), t.Size)
		default:
			g.fail(e, "builtin %s has no value here", e.Name)
		}
	case *ast.Var:
		g.copyMem(regScratch, dst, regScratch, g.varOffset(g.prog.Vars[e]), t.Size)
	case *ast.Map:
		g.mapRead(e, dst)
	case *ast.Tuple:
		offs := t.Offsets()
		if hasPadding(t) {
			// Padding is zero, so that equal tuples hash alike as keys.
			g.zeroMem(regScratch, dst, t.Size)
		}
		for i, x := range e.Elems {
			et := t.Elems[i]
			g.into(x, et, dst+offs[i])
		}
	case *ast.Field:
		if f := g.prog.Args[e]; f != nil && t.Kind == sema.Array {
			// Arrays are copied from the record as they are.
			g.scratchPtr(asm.R1, dst)
			g.emit(asm.Mov.Imm(asm.R2, int32(t.Size)), asm.Mov.Reg(asm.R3, regCtx),
				asm.Add.Imm(asm.R3, int32(f.Offset)), asm.FnProbeReadKernel.Call())
			return dst
		}
		if f := g.prog.Args[e]; f != nil {
			g.argString(f, dst, t.Size)
			return dst
		}
		xt := g.typ(e.X)
		src := g.composite(e.X, -1)
		if xt.Kind == sema.Record {
			g.copyMem(regScratch, dst, regScratch, src+g.prog.Members[e].Offset, t.Size)
			return dst
		}
		g.copyMem(regScratch, dst, regScratch, src+xt.Offsets()[xt.FieldIndex(e.Name)], t.Size)
	case *ast.Ternary:
		g.ternary(e, func(arm ast.Expr) { g.into(arm, t, dst) })
	case *ast.Index:
		g.indexComposite(e, t, dst)
	case *ast.Call:
		g.compositeCall(e, dst)
	case *ast.Cast:
		// A cast to an array keeps the value's bytes, which are as many.
		if xt := g.typ(e.X); xt.IsScalar() {
			g.scalar(e.X)
			g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, sizeOf(t.Size)))
		} else {
			g.composite(e.X, dst)
		}
	case *ast.BlockExpr:
		return g.blockComposite(e, dst)
	default:
		g.fail(e, "unsupported expression %T", e)
	}
	return dst
}

// into stores e, converted to type t, at scratch offset dst. Integers are
// stored as 8 bytes, strings are zero padded to t's size.
func (g *gen) into(e ast.Expr, t *sema.Type, dst int) {
	et := g.typ(e)
	if et.IsScalar() {
		g.scalar(e)
		g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, storeSize(t)))
		return
	}
	if sameLayout(et, t) {
		g.composite(e, dst)
		return
	}
	// A smaller string or tuple, or a record with its fields in another
	// order: build it apart, then convert it.
	g.convert(dst, t, g.composite(e, -1), et)
}

// convert copies the value of type from at scratch offset src to dst as
// a value of type to: tuples element by element, a record's by field
// name, and anything else zero padded, as a shorter string.
func (g *gen) convert(dst int, to *sema.Type, src int, from *sema.Type) {
	if to.Kind == sema.Tuple && from.Kind == sema.Tuple {
		offs, toffs := from.Offsets(), to.Offsets()
		for i, el := range to.Elems {
			j := i
			if to.Names != nil {
				j = from.FieldIndex(to.Names[i])
			}
			g.convert(dst+toffs[i], el, src+offs[j], from.Elems[j])
		}
		return
	}
	if from.Kind == sema.Int && to.Kind == sema.Int && from.Size != to.Size {
		// A tuple's integer widened to its place in a wider tuple.
		g.emit(asm.LoadMem(asm.R0, regScratch, int16(src), sizeOf(from.Size)))
		g.extend(from)
		g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, sizeOf(to.Size)))
		return
	}
	if from.Size != to.Size {
		g.zeroMem(regScratch, dst, to.Size)
	}
	g.copyMem(regScratch, dst, regScratch, src, min(from.Size, to.Size))
}

// fits reports whether every integer of type from is one of type to as
// it is, so that storing it needs no truncation: the common `$x = 1`,
// whose literal and variable are int8, stays one instruction.
func fits(from, to *sema.Type) bool {
	if from.Kind != sema.Int || to.Kind != sema.Int || from.Size > to.Size {
		return false
	}
	return from.Signed == to.Signed || from.Flex || !from.Signed && from.Size < to.Size
}

// hasPadding reports whether a tuple has bytes between or after its
// elements.
func hasPadding(t *sema.Type) bool {
	n := 0
	for _, e := range t.Elems {
		n += e.Size
	}
	return n != t.Size
}

// storeSize is the width an integer-like value of type t takes in
// memory: an integer's or bool's own size inside a tuple, else 8 bytes.
func storeSize(t *sema.Type) asm.Size {
	if t.Kind == sema.Int || t.Kind == sema.Bool {
		return sizeOf(t.Size)
	}
	return asm.DWord
}

// sameLayout reports whether values of types a and b have the same bytes:
// the same size and, for tuples, elements of the same layouts in the same
// order.
func sameLayout(a, b *sema.Type) bool {
	if a.Size != b.Size || (a.Kind == sema.Tuple) != (b.Kind == sema.Tuple) {
		return false
	}
	if a.Kind != sema.Tuple {
		return true
	}
	if len(a.Elems) != len(b.Elems) || !slices.Equal(a.Names, b.Names) {
		return false
	}
	for i := range a.Elems {
		if !sameLayout(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	return true
}

// argString reads a string field of a tracepoint record into dst.
func (g *gen) argString(f *sema.ArgField, dst, size int) {
	g.zeroMem(regScratch, dst, size)
	g.scratchPtr(asm.R1, dst)
	g.emit(asm.Mov.Imm(asm.R2, int32(size)), asm.Mov.Reg(asm.R3, regCtx))
	if f.DataLoc {
		// The record holds (length << 16 | offset) of the string.
		g.emit(
			asm.LoadMem(asm.R4, regCtx, int16(f.Offset), asm.Word),
			asm.And.Imm(asm.R4, 0xffff),
			asm.Add.Reg(asm.R3, asm.R4),
			asm.FnProbeReadKernelStr.Call(),
		)
		return
	}
	g.emit(asm.Add.Imm(asm.R3, int32(f.Offset)))
	if size > f.Size {
		g.emit(asm.Mov.Imm(asm.R2, int32(f.Size)))
	}
	g.emit(asm.FnProbeReadKernelStr.Call())
}

// varOffset returns a variable's home: for integers a BPF stack slot
// (reserveVars), for anything else a place in the scratch area.
func (g *gen) varOffset(v *sema.Variable) int {
	if off, ok := g.vars[v]; ok {
		return off
	}
	off := g.alloc(v.Type.Size)
	g.vars[v] = off
	return off
}

func (g *gen) storeVar(v *sema.Variable, e ast.Expr) {
	off := g.varOffset(v)
	if v.Type.IsScalar() {
		g.scalar(e)
		if !fits(g.typ(e), v.Type) {
			g.truncate(v.Type)
		}
		g.emit(asm.StoreMem(g.frame, int16(off), asm.R0, asm.DWord))
		return
	}
	if _, same := e.(*ast.Var); !same && g.reads(e, v) {
		// The value reads the variable it replaces, as $t = ($t.1,
		// $t.0) does: build it apart, or its first bytes would
		// overwrite what the rest reads.
		tmp := g.alloc(v.Type.Size)
		g.into(e, v.Type, tmp)
		g.copyMem(regScratch, off, regScratch, tmp, v.Type.Size)
		return
	}
	g.into(e, v.Type, off)
}

// reads reports whether e reads the variable v.
func (g *gen) reads(e ast.Expr, v *sema.Variable) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if x, ok := n.(*ast.Var); ok && g.prog.Vars[x] == v {
			found = true
		}
		return !found
	})
	return found
}

func (g *gen) zeroVar(v *sema.Variable) {
	off := g.varOffset(v)
	if v.Type.IsScalar() {
		g.emit(asm.Mov.Imm(asm.R0, 0), asm.StoreMem(g.frame, int16(off), asm.R0, asm.DWord))
		return
	}
	g.zeroMem(regScratch, off, align8(v.Type.Size))
}

// ternary generates c ? a : b, each arm by gen: into R0, into scratch or
// for its effect.
func (g *gen) ternary(e *ast.Ternary, gen func(ast.Expr)) {
	elseL, end := g.newLabel(), g.newLabel()
	g.cond(e.Cond, elseL)
	gen(e.Then)
	g.emit(asm.Ja.Label(end))
	g.place(elseL)
	gen(e.Else)
	g.place(end)
}

package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/lang/token"
	"gtrace/sema"
)

// Memory outside the program is read with bpf_probe_read: a field of a
// struct reached through a pointer, an element through a pointer, a
// dereference. address computes where such a value lives; readScalar and
// readInto fetch it. The generic helper reads kernel and user addresses
// alike on x86_64, where the two do not overlap, as str() and bpftrace
// 0.17 rely on: a syscall tracepoint's struct pointers are user pointers.

// inKernel reports whether e is a value in kernel memory that address
// can locate.
func (g *gen) inKernel(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Field:
		if _, ok := g.prog.Members[e]; !ok {
			return false
		}
		return g.typ(e.X).Kind == sema.Pointer || g.inKernel(e.X)
	case *ast.Index:
		xt := g.typ(e.X)
		return xt.Kind == sema.Pointer || xt.Kind == sema.Array && g.inKernel(e.X)
	case *ast.Unary:
		return e.Op == token.MUL
	}
	return false
}

// address computes the kernel address of e, for which inKernel holds,
// into R0.
func (g *gen) address(e ast.Expr) {
	switch e := e.(type) {
	case *ast.Field:
		if g.typ(e.X).Kind == sema.Pointer {
			g.scalar(e.X)
		} else {
			g.address(e.X)
		}
		if off := g.prog.Members[e].Offset; off != 0 {
			g.emit(asm.Add.Imm(asm.R0, int32(off)))
		}
	case *ast.Index:
		xt := g.typ(e.X)
		elem := 0
		if xt.Kind == sema.Pointer {
			g.scalar(e.X)
			elem = sema.PointeeSize(xt)
		} else {
			g.address(e.X)
			elem = xt.Elems[0].Size
		}
		slot := g.pushSlot()
		g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
		g.scalar(e.I)
		if xt.Kind == sema.Array {
			g.checkIndex(e, false)
		}
		g.emit(asm.Mul.Imm(asm.R0, int32(elem)), asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord), asm.Add.Reg(asm.R0, asm.R1))
		g.popSlot()
	case *ast.Unary:
		g.scalar(e.X)
	case *ast.Var:
		// &$x: integers live in the probe's frame, the rest in scratch.
		v := g.prog.Vars[e]
		base := regScratch
		if v.Type.IsScalar() {
			base = g.frame
		}
		g.emit(asm.Mov.Reg(asm.R0, base), asm.Add.Imm(asm.R0, int32(g.varOffset(v))))
	default:
		g.fail(e, "this expression has no address in kernel memory")
	}
}

// readScalar reads the integer-like value e from kernel memory into R0.
// A failed read gives 0, as bpftrace gives.
func (g *gen) readScalar(e ast.Expr, t *sema.Type) {
	g.address(e)
	size, m := t.Size, sema.Member{}
	if f, ok := e.(*ast.Field); ok {
		m = g.prog.Members[f]
	}
	if m.BitSize > 0 {
		size = (m.BitOffset + m.BitSize + 7) / 8
	}
	g.emit(
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, int32(size)),
		asm.FnProbeRead.Call(),
	)
	g.probeReadError(e)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord))
	if m.BitSize > 0 {
		// Little endian: the field starts BitOffset bits into the bytes.
		g.emit(asm.RSh.Imm(asm.R0, int32(m.BitOffset)))
		g.emit(asm.LSh.Imm(asm.R0, int32(64-m.BitSize)))
		if t.Signed {
			g.emit(asm.ArSh.Imm(asm.R0, int32(64-m.BitSize)))
		} else {
			g.emit(asm.RSh.Imm(asm.R0, int32(64-m.BitSize)))
		}
		return
	}
	g.extend(t)
}

// readInto copies the struct, union, array or string e from kernel
// memory into scratch at dst.
func (g *gen) readInto(e ast.Expr, t *sema.Type, dst int) {
	g.address(e)
	g.emit(asm.Mov.Reg(asm.R3, asm.R0))
	g.scratchPtr(asm.R1, dst)
	g.emit(asm.Mov.Imm(asm.R2, int32(t.Size)), asm.FnProbeRead.Call())
	g.probeReadError(e)
}

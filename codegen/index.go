package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// arrayOutOfBounds is bpftrace's warning when an array's index, known
// only at run time, is past its end.
const arrayOutOfBounds = "Array access out of bounds. This can lead to unexpected results."

// indexScalar reads the integer element x[i] of an array or string held
// in scratch or in a tracepoint's record into R0.
func (g *gen) indexScalar(e *ast.Index, t *sema.Type) {
	if i, ok := g.prog.Consts[e.I]; ok {
		at := int(i) * t.Size
		if f := g.prog.Args[asField(e.X)]; f != nil {
			g.emit(asm.LoadMem(asm.R0, regCtx, int16(f.Offset+at), sizeOf(t.Size)))
		} else {
			off := g.composite(e.X, -1)
			g.emit(asm.LoadMem(asm.R0, regScratch, int16(off+at), sizeOf(t.Size)))
		}
		g.extend(t)
		return
	}
	// An index known only at run time: the value is copied to scratch,
	// where the index, bounded for the verifier, finds the element.
	off := g.composite(e.X, -1)
	g.scalar(e.I)
	g.checkIndex(e, true)
	g.emit(
		asm.Mul.Imm(asm.R0, int32(t.Size)),
		asm.Mov.Reg(asm.R1, regScratch),
		asm.Add.Imm(asm.R1, int32(off)),
		asm.Add.Reg(asm.R1, asm.R0),
		asm.LoadMem(asm.R0, asm.R1, 0, sizeOf(t.Size)),
	)
	g.extend(t)
}

// indexComposite copies the element x[i], an array or a struct, of an
// array in scratch to dst; the checker made i a constant.
func (g *gen) indexComposite(e *ast.Index, t *sema.Type, dst int) {
	src := g.composite(e.X, -1)
	g.copyMem(regScratch, dst, regScratch, src+int(g.prog.Consts[e.I])*t.Size, t.Size)
}

// checkIndex tests the index in R0 against the length of the array or
// string e indexes. Past the end of an array, it warns as bpftrace does;
// with clamp, the index then becomes 0, so that a read in scratch stays
// inside the value. A flexible array member has no length to test.
func (g *gen) checkIndex(e *ast.Index, clamp bool) {
	xt := g.typ(e.X)
	n := xt.Len
	if xt.Kind == sema.String {
		n = xt.Size
	}
	if n == 0 {
		return
	}
	ok := g.newLabel()
	g.emit(asm.JLE.Imm(asm.R0, int32(n-1), ok))
	if xt.Kind == sema.Array {
		slot := g.pushSlot()
		g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
		g.event(&Event{Kind: EvWarning, Format: arrayOutOfBounds, At: e.Span()}, nil)
		g.emit(asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord))
		g.popSlot()
	}
	if clamp {
		g.emit(asm.Mov.Imm(asm.R0, 0))
	}
	g.place(ok)
}

package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
)

// strcontains sets R0 to 1 when the string needle occurs in haystack,
// and to 0 otherwise.
func (g *gen) strcontains(haystack, needle ast.Expr) {
	g.strstr(haystack, needle)
	g.emit(asm.RSh.Imm(asm.R0, 63), asm.Xor.Imm(asm.R0, 1))
}

// strstr sets R0 to the index of the first occurrence of the string
// needle in haystack, or to -1. A bpf_loop callback tries every start in
// the haystack; for each, a bounded loop compares the needle byte by
// byte.
func (g *gen) strstr(haystack, needle ast.Expr) {
	h, n := g.composite(haystack, -1), g.composite(needle, -1)
	hsize, nsize := g.typ(haystack).Size, g.typ(needle).Size
	found := g.alloc(8)

	sym := fmt.Sprintf("strcontains%d", g.labels)
	g.labels++
	prologue := func() { g.emit(asm.StoreMem(asm.RFP, cbArg0, asm.R1, asm.DWord)) }
	g.callback(sym, []string{"index", "ctx"}, asm.R2, false, prologue, func(next, stop, _ string) {
		const slotJ = cbArg1
		// R7 = i, bounded for the verifier.
		g.emit(
			asm.LoadMem(asm.R7, asm.RFP, cbArg0, asm.DWord),
			asm.JGE.Imm(asm.R7, int32(hsize), stop),
			asm.Mov.Imm(asm.R1, 0),
			asm.StoreMem(asm.RFP, slotJ, asm.R1, asm.DWord),
		)
		top, hit, miss := g.newLabel(), g.newLabel(), g.newLabel()
		g.place(top)
		g.emit(
			asm.LoadMem(asm.R2, asm.RFP, slotJ, asm.DWord),
			// The whole needle matched: found.
			asm.JGE.Imm(asm.R2, int32(nsize), hit),
			asm.Mov.Reg(asm.R3, regScratch), asm.Add.Imm(asm.R3, int32(n)), asm.Add.Reg(asm.R3, asm.R2),
			asm.LoadMem(asm.R4, asm.R3, 0, asm.Byte),
		)
		match := g.newLabel()
		g.emit(asm.JNE.Imm(asm.R4, 0, match))
		g.place(hit)
		g.emit(
			asm.StoreMem(regScratch, int16(found), asm.R7, asm.DWord),
			asm.Ja.Label(stop),
		)
		g.place(match)
		g.emit(
			// k = i + j must stay inside the haystack.
			asm.Mov.Reg(asm.R5, asm.R7), asm.Add.Reg(asm.R5, asm.R2),
			asm.JGE.Imm(asm.R5, int32(hsize), stop),
			asm.Mov.Reg(asm.R3, regScratch), asm.Add.Imm(asm.R3, int32(h)), asm.Add.Reg(asm.R3, asm.R5),
			asm.LoadMem(asm.R3, asm.R3, 0, asm.Byte),
			asm.JNE.Reg(asm.R3, asm.R4, miss),
			asm.Add.Imm(asm.R2, 1),
			asm.StoreMem(asm.RFP, slotJ, asm.R2, asm.DWord),
			asm.Ja.Label(top),
		)
		// No match at i; no later start can match past the haystack's end.
		g.place(miss)
		g.emit(
			asm.Mov.Reg(asm.R3, regScratch), asm.Add.Imm(asm.R3, int32(h)), asm.Add.Reg(asm.R3, asm.R7),
			asm.LoadMem(asm.R3, asm.R3, 0, asm.Byte),
			asm.JEq.Imm(asm.R3, 0, stop),
			asm.Ja.Label(next),
		)
	})
	g.emit(asm.Mov.Imm(asm.R1, -1), asm.StoreMem(regScratch, int16(found), asm.R1, asm.DWord))
	g.loadImm(asm.R1, int64(hsize))
	g.callHelper(asm.FnLoop, sym)
	g.emit(asm.LoadMem(asm.R0, regScratch, int16(found), asm.DWord))
}

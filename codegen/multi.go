package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// A multi-kprobe is one program on many functions. Its attach cookie is
// the function's index, which selects the function's names in a map the
// runtime fills: the probe name, then the func name.

// namesMap is the name of program i's names map.
func namesMap(i int) string { return fmt.Sprintf("names%d", i) }

// multiName copies the current function's probe name, or func name, into
// dst, a string of size bytes.
func (g *gen) multiName(fn bool, dst, size int) {
	g.nameSize = size
	off := 0
	if fn {
		off = size
	}
	missing, done := g.newLabel(), g.newLabel()
	g.emit(
		asm.Mov.Reg(asm.R1, regCtx),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(namesMap(g.index)),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, missing),
		asm.Mov.Reg(regMapVal, asm.R0),
	)
	g.copyMem(regScratch, dst, regMapVal, off, size)
	g.emit(asm.Ja.Label(done))
	g.place(missing)
	g.zeroMem(regScratch, dst, size)
	g.place(done)
}

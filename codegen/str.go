package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// str reads the string at the address args[0] into dst, as str() does.
// A string of max_strlen below 1024 is read one byte longer, as in
// bpftrace, and cut to its type's size: one that fills it has no NUL,
// which shows it was truncated, and prints with str_trunc_trailer.
func (g *gen) str(args []ast.Expr, t *sema.Type, dst int) {
	g.scalar(args[0])
	g.emit(asm.Mov.Reg(asm.R3, asm.R0))
	read, size := dst, t.Size
	if len(args) == 1 && t.Size < 1024 {
		read, size = g.alloc(t.Size+1), t.Size+1
	}
	g.zeroMem(regScratch, read, size)
	g.scratchPtr(asm.R1, read)
	// The generic helper reads user and kernel addresses alike on
	// x86_64, as str() must for both.
	g.emit(asm.Mov.Imm(asm.R2, int32(size)), asm.FnProbeReadStr.Call())
	if read != dst {
		g.copyMem(regScratch, dst, regScratch, read, t.Size)
	}
}

package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/probe"
	"gtrace/sema"
)

// iterGuard ends an iterator's program when its context holds no
// object: the kernel runs it once more after the last object, with the
// object's pointer, the field after the meta, NULL.
func (g *gen) iterGuard(exit string) {
	if g.prog.Probe.Kind != probe.Iter {
		return
	}
	g.emit(asm.LoadMem(asm.R0, regCtx, 8, asm.DWord), asm.JEq.Imm(asm.R0, 0, exit))
}

// seqPrintf is printf in an iterator's probe, as in bpftrace: it writes
// to the iterator's seq_file with bpf_seq_printf, so that what it prints
// is what reading the iterator returns. The kernel formats the values:
// integers, pointers and strings by their address. It reports false, generating
// nothing, in other probes.
func (g *gen) seqPrintf(call []ast.Expr) bool {
	if g.prog.Probe.Kind != probe.Iter {
		return false
	}
	format, args := call[0].(*ast.StrLit).Value, call[1:]
	data := g.alloc(8 * max(len(args), 1))
	for i, a := range args {
		t := g.typ(a)
		switch {
		case t.Kind == sema.Int || t.Kind == sema.Bool || t.Kind == sema.Pointer:
			g.scalar(a)
			g.emit(asm.StoreMem(regScratch, int16(data+8*i), asm.R0, asm.DWord))
		case t.Kind == sema.String:
			off := g.alloc(t.Size)
			g.into(a, t, off)
			g.scratchPtr(asm.R0, off)
			g.emit(asm.StoreMem(regScratch, int16(data+8*i), asm.R0, asm.DWord))
		default:
			g.fail(a, "printf in iter probes prints integers and strings only, not %s", t)
		}
	}
	fmtOff := g.alloc(len(format) + 1)
	g.storeBytes(fmtOff, []byte(format), len(format)+1)
	// ctx->meta->seq: both are the first fields of their structs.
	g.emit(asm.LoadMem(asm.R1, regCtx, 0, asm.DWord), asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord))
	g.scratchPtr(asm.R2, fmtOff)
	g.emit(asm.Mov.Imm(asm.R3, int32(len(format)+1)))
	if len(args) == 0 {
		g.emit(asm.Mov.Imm(asm.R4, 0))
	} else {
		g.scratchPtr(asm.R4, data)
	}
	g.emit(asm.Mov.Imm(asm.R5, int32(8*len(args))), asm.FnSeqPrintf.Call())
	return true
}

package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/symbol"
)

// x86Regs places x86_64's registers in struct pt_regs, a usdt probe's
// context: each register's offset, and its names for 64, 32, 16 and 8
// bits.
var x86Regs = []struct {
	off   int16
	names [4]string
}{
	{0, [4]string{"r15", "r15d", "r15w", "r15b"}},
	{8, [4]string{"r14", "r14d", "r14w", "r14b"}},
	{16, [4]string{"r13", "r13d", "r13w", "r13b"}},
	{24, [4]string{"r12", "r12d", "r12w", "r12b"}},
	{32, [4]string{"rbp", "ebp", "bp", "bpl"}},
	{40, [4]string{"rbx", "ebx", "bx", "bl"}},
	{48, [4]string{"r11", "r11d", "r11w", "r11b"}},
	{56, [4]string{"r10", "r10d", "r10w", "r10b"}},
	{64, [4]string{"r9", "r9d", "r9w", "r9b"}},
	{72, [4]string{"r8", "r8d", "r8w", "r8b"}},
	{80, [4]string{"rax", "eax", "ax", "al"}},
	{88, [4]string{"rcx", "ecx", "cx", "cl"}},
	{96, [4]string{"rdx", "edx", "dx", "dl"}},
	{104, [4]string{"rsi", "esi", "si", "sil"}},
	{112, [4]string{"rdi", "edi", "di", "dil"}},
	{128, [4]string{"rip", "eip", "", ""}},
	{152, [4]string{"rsp", "esp", "sp", "spl"}},
	// The second bytes of the first four: %ah is bits 8 to 15 of %rax.
	{81, [4]string{"", "", "", "ah"}},
	{41, [4]string{"", "", "", "bh"}},
	{89, [4]string{"", "", "", "ch"}},
	{97, [4]string{"", "", "", "dh"}},
}

// x86Reg returns where pt_regs keeps the register name and how many bytes
// the name covers.
func x86Reg(name string) (off int16, size int, ok bool) {
	for _, r := range x86Regs {
		for i, n := range r.names {
			if n != "" && n == name {
				return r.off, 8 >> i, true
			}
		}
	}
	return 0, 0, false
}

// usdtArg sets R0 to argument n of a usdt probe, read as its note's spec
// says: a constant, a register, or memory of the traced process at a
// register plus a displacement (plus an index register times a scale),
// then sign or zero extended from the spec's size.
func (g *gen) usdtArg(e *ast.Ident, n int) {
	u := g.prog.Probe.USDT
	if u.ArgsErr != nil {
		g.fail(e, "%s: %v", e.Name, u.ArgsErr)
		return
	}
	if len(u.Arguments) == 0 {
		g.fail(e, "%s: the usdt probe has no arguments", e.Name)
		return
	}
	if n >= len(u.Arguments) {
		g.fail(e, "%s: the usdt probe's arguments are arg0 to arg%d (%q)", e.Name, len(u.Arguments)-1, u.Args)
		return
	}
	a := u.Arguments[n]
	switch a.Kind {
	case symbol.USDTConst:
		g.loadImm(asm.R0, extendConst(a.Value, a.Size, a.Signed))
		return
	case symbol.USDTReg:
		off, size, ok := x86Reg(a.Reg)
		if !ok {
			g.fail(e, "%s: unknown register %%%s in usdt argument spec %q", e.Name, a.Reg, u.Args)
			return
		}
		size = min(size, a.Size)
		g.emit(asm.LoadMem(asm.R0, regCtx, off, sizeOf(size)))
		g.extendArg(size, a.Signed)
		return
	}

	// Memory: R3 = base + displacement (+ index * scale).
	base, _, okBase := x86Reg(a.Reg)
	if !okBase {
		g.fail(e, "%s: unknown register %%%s in usdt argument spec %q", e.Name, a.Reg, u.Args)
		return
	}
	g.emit(asm.LoadMem(asm.R3, regCtx, base, asm.DWord))
	if a.Value >= -1<<31 && a.Value < 1<<31 {
		g.emit(asm.Add.Imm(asm.R3, int32(a.Value)))
	} else {
		g.emit(asm.LoadImm(asm.R1, a.Value, asm.DWord), asm.Add.Reg(asm.R3, asm.R1))
	}
	if a.Index != "" {
		index, _, ok := x86Reg(a.Index)
		if !ok {
			g.fail(e, "%s: unknown register %%%s in usdt argument spec %q", e.Name, a.Index, u.Args)
			return
		}
		g.emit(
			asm.LoadMem(asm.R1, regCtx, index, asm.DWord),
			asm.Mul.Imm(asm.R1, int32(a.Scale)),
			asm.Add.Reg(asm.R3, asm.R1),
		)
	}
	// A failed read leaves 0, as bpf_probe_read_user clears its buffer.
	g.emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, int32(a.Size)),
		asm.FnProbeReadUser.Call(),
		asm.LoadMem(asm.R0, asm.RFP, -8, asm.DWord),
	)
	g.extendArg(a.Size, a.Signed)
}

// extendArg sign-extends R0, zero-extended from size bytes, when signed.
func (g *gen) extendArg(size int, signed bool) {
	if signed && size < 8 {
		sh := int32(64 - 8*size)
		g.emit(asm.LSh.Imm(asm.R0, sh), asm.ArSh.Imm(asm.R0, sh))
	}
}

// extendConst cuts v to size bytes and extends it back to 64 bits, with
// its sign when signed.
func extendConst(v int64, size int, signed bool) int64 {
	if size >= 8 {
		return v
	}
	sh := 64 - 8*size
	if signed {
		return v << sh >> sh
	}
	return int64(uint64(v) << sh >> sh)
}

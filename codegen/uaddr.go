package codegen

import "github.com/cilium/ebpf/asm"

// ptRegsIP is the offset of ip in x86_64's struct pt_regs.
const ptRegsIP = 128

// addLoadBias adds to the link-time address in R0 where the probe's
// position-independent file is loaded: the traced ip, which a uprobe
// sets to the probed instruction, less that instruction's link-time
// address.
func (g *gen) addLoadBias() {
	if g.prog.ProbeVaddr == 0 {
		return
	}
	g.emit(asm.LoadMem(asm.R1, regCtx, ptRegsIP, asm.DWord), asm.Add.Reg(asm.R0, asm.R1))
	g.loadImm(asm.R1, int64(g.prog.ProbeVaddr))
	g.emit(asm.Sub.Reg(asm.R0, asm.R1))
}

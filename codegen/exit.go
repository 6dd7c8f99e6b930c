package codegen

import "github.com/cilium/ebpf/asm"

// stopAll raises the stop flag that every attached program checks first,
// as the runtime does when tracing ends: after exit(), the probes stop
// at once rather than when user space has read the exit event, so that
// the maps hold what they held when the script exited.
func (g *gen) stopAll() {
	g.emit(
		asm.LoadMapValue(asm.R1, 0, globalStopped).WithReference(mapGlobals),
		asm.Mov.Imm(asm.R2, 1),
		asm.StoreMem(asm.R1, 0, asm.R2, asm.DWord),
	)
}

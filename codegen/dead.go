package codegen

import "github.com/cilium/ebpf/asm"

// removeDead drops the instructions no path reaches from the program's
// entry or from a function it references: the verifier refuses a
// program with any ("unreachable insn"). Code after a return, break or
// continue is dead, and so is a jump over an else branch when the then
// branch ends in a jump, or a loop epilogue that every path jumps past.
func removeDead(insns asm.Instructions) asm.Instructions {
	if len(insns) == 0 {
		return insns
	}
	at := make(map[string]int)
	for i, in := range insns {
		if sym := in.Symbol(); sym != "" {
			at[sym] = i
		}
	}
	live := make([]bool, len(insns))
	work := []int{0}
	reach := func(i int) {
		if i >= 0 && i < len(insns) && !live[i] {
			live[i] = true
			work = append(work, i)
		}
	}
	live[0] = true
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		in := insns[i]
		if ref := in.Reference(); ref != "" {
			// A jump's target, a BPF function called or passed to a
			// helper; map references name no instruction.
			if j, ok := at[ref]; ok && (in.OpCode.JumpOp() != asm.InvalidJumpOp || in.Src == asm.PseudoFunc) {
				reach(j)
			}
		}
		if op := in.OpCode.JumpOp(); op != asm.Ja && op != asm.Exit {
			reach(i + 1)
		}
	}
	out := insns[:0:0]
	for i, in := range insns {
		if live[i] {
			out = append(out, in)
		}
	}
	return out
}

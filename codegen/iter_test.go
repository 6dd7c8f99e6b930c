package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// TestIterPrintf checks that printf in an iterator's probe writes to the
// iterator's seq_file, not to the ring buffer, and that the program
// ends at once on the run after the last object.
func TestIterPrintf(t *testing.T) {
	out := compile(t, `iter:task { printf("%d %s\n", 7, "x"); }`, nil)
	insns := out.Spec.Programs[out.Progs[0].Name].Instructions
	calls := map[asm.BuiltinFunc]int{}
	for _, in := range insns {
		if in.IsBuiltinCall() {
			calls[asm.BuiltinFunc(in.Constant)]++
		}
	}
	if calls[asm.FnSeqPrintf] != 1 || calls[asm.FnRingbufOutput] != 0 {
		t.Errorf("calls %v, want one bpf_seq_printf and no ring buffer output", calls)
	}
	if len(out.Events) != 0 {
		t.Errorf("%d events, want none", len(out.Events))
	}
	guard := false
	for i := 0; i+1 < len(insns); i++ {
		if ld := insns[i]; ld.OpCode.Class().IsLoad() && ld.Src == asm.R6 && ld.Offset == 8 && insns[i+1].OpCode.JumpOp() == asm.JEq {
			guard = true
		}
	}
	if !guard {
		t.Errorf("no test of the object pointer at ctx+8:\n%v", insns)
	}
}

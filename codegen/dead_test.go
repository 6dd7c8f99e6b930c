package codegen

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

func TestRemoveDead(t *testing.T) {
	tests := []struct {
		name string
		in   asm.Instructions
		want []int // indexes of in that stay
	}{
		{"after return", asm.Instructions{
			asm.Ja.Label("exit"),
			asm.Mov.Imm(asm.R0, 1), // dead
			asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
			asm.Return(),
		}, []int{0, 2, 3}},
		{"both branches jump", asm.Instructions{
			asm.JEq.Imm(asm.R1, 0, "else"),
			asm.Ja.Label("exit"),
			asm.Ja.Label("end"), // dead: the then branch returned
			asm.Mov.Imm(asm.R0, 2).WithSymbol("else"),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("end"),
			asm.Return().WithSymbol("exit"),
		}, []int{0, 1, 3, 4, 5}},
		{"loop continue", asm.Instructions{
			asm.Mov.Imm(asm.R0, 1).WithSymbol("top"),
			asm.JEq.Imm(asm.R0, 0, "end"),
			asm.Ja.Label("top"),
			asm.Ja.Label("top"), // dead: the loop's own back jump
			asm.Return().WithSymbol("end"),
		}, []int{0, 1, 2, 4}},
		{"callback referenced", asm.Instructions{
			funcRef(asm.R2, "cb"),
			asm.Return(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("cb"),
			asm.Return(),
			asm.Mov.Imm(asm.R0, 1).WithSymbol("unused"), // dead: no reference
			asm.Return(),
		}, []int{0, 1, 2, 3}},
		{"callback break", asm.Instructions{
			asm.Ja.Label("brk"),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("cont"), // dead: no continue
			asm.Return(),
			asm.Mov.Imm(asm.R0, 1).WithSymbol("brk"),
			asm.Return(),
		}, []int{0, 3, 4}},
		{"map reference is no label", asm.Instructions{
			asm.LoadMapPtr(asm.R1, 0).WithReference("m"),
			asm.Return(),
			asm.Mov.Imm(asm.R0, 1).WithSymbol("m"),
			asm.Return(),
		}, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := removeDead(tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("kept %d instructions, want %d:\n%v", len(got), len(tt.want), got)
			}
			for i, j := range tt.want {
				if got[i].OpCode != tt.in[j].OpCode || got[i].Constant != tt.in[j].Constant || got[i].Symbol() != tt.in[j].Symbol() {
					t.Errorf("instruction %d is %v, want %v", i, got[i], tt.in[j])
				}
			}
		})
	}
}

package runtime

import (
	"strings"
	"testing"
)

// TestRefusedInsn finds the instruction a verifier log refuses, from
// logs of this kernel's verifier.
func TestRefusedInsn(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want int
	}{
		{"named by the cause", `0: R1=ctx() R10=fp0
; while (1) { continue; } @ :0
1: (b7) r0 = 1                        ; R0_w=1
2: (05) goto pc-2
infinite loop detected at insn 1
cur state: R0_w=1 R10=fp0
processed 4 insns (limit 1000000) max_states_per_insn 0 total_states 1 peak_states 1 mark_read 0`, 1},
		{"cfg check", "unreachable insn 4\nprocessed 0 insns", 4},
		{"last instruction shown", `0: R1=ctx() R10=fp0
; @x = *(uint8 *)0; @ :0
7: (71) r1 = *(u8 *)(r0 +0)
R0 invalid mem access 'scalar'
processed 8 insns (limit 1000000)`, 7},
		{"none", "BPF program is too large. Processed 1000001 insn\nprocessed 1000001 insns", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := strings.Split(tt.log, "\n")
			got := -1
			for i := len(log) - 1; i >= 0; i-- {
				if isCause(strings.TrimSpace(log[i])) {
					got = refusedInsn(log, i)
					break
				}
			}
			if got != tt.want {
				t.Errorf("refused instruction %d, want %d", got, tt.want)
			}
		})
	}
}

func TestIsCause(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"R0 invalid mem access 'scalar'", true},
		{"R1 type=scalar expected=fp, pkt, pkt_meta, map_key, map_value", true},
		{"infinite loop detected at insn 1", true},
		{"R0=1 R10=fp0", false},
		{"R0_w=map_value(map=mapfull,ks=4,vs=8) R10=fp0", false},
		{"12: (85) call bpf_map_lookup_elem#1", false},
		{"; while (1) { continue; } @ :0", false},
		{"processed 4 insns (limit 1000000)", false},
		{"cur state: R0_w=1 R10=fp0", false},
		{"from 4 to 6: R0=0", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isCause(tt.line); got != tt.want {
			t.Errorf("isCause(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

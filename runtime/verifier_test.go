package runtime

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"gtrace/codegen"
	"gtrace/internal/testutils"
	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/sema"
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

// TestLoadErrorLocated loads a program whose second statement reads
// through a null pointer: the error points at that statement, and the
// log is printed only with -v.
func TestLoadErrorLocated(t *testing.T) {
	testutils.RequireRoot(t)
	span := func(a, b int) token.Span { return token.Span{Start: token.Pos(a), End: token.Pos(b)} }
	first := &codegen.Source{Span: span(8, 15), Text: "@a = 1;"}
	bad := &codegen.Source{Span: span(16, 30), Text: "@b = *(0);"}
	proto := &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: "ctx", Type: &btf.Pointer{Target: &btf.Void{}}}}}
	insns := asm.Instructions{
		btf.WithFuncMetadata(asm.Mov.Imm(asm.R0, 0).WithSource(first), &btf.Func{Name: "bad", Type: proto, Linkage: btf.GlobalFunc}),
		asm.Mov.Imm(asm.R1, 0).WithSource(bad),
		asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord),
		asm.Return(),
	}
	spec := &ebpf.ProgramSpec{Name: "bad", Type: ebpf.RawTracepoint, Instructions: insns, License: "GPL"}
	_, err := ebpf.NewProgram(spec)
	if err == nil {
		t.Fatal("the verifier took a read through a null pointer")
	}
	p := &codegen.Program{Name: "bad", Prog: &sema.Prog{Probe: probe.Probe{Name: "begin"},
		Attach: &ast.AttachPoint{At: ast.At{Sp: span(0, 5)}, Text: "BEGIN"}}}
	for _, verbose := range []bool{false, true} {
		var stderr bytes.Buffer
		r := &run{out: &codegen.Output{Spec: &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{"bad": spec}}},
			opts: &Options{Verbose: verbose, Stderr: &stderr}}
		var l diag.List
		if !errors.As(r.loadError(p, err), &l) || len(l) != 1 {
			t.Fatalf("error %v, want one diagnostic", err)
		}
		if l[0].Span != bad.Span || !strings.HasPrefix(l[0].Msg, "the BPF verifier rejected the program of begin: R1 invalid mem access 'scalar'") {
			t.Errorf("got %q at %v, want the invalid access at %v", l[0].Msg, l[0].Span, bad.Span)
		}
		if log := stderr.String(); verbose != strings.Contains(log, "verifier log of begin:\n") {
			t.Errorf("verbose %v, log printed:\n%s", verbose, log)
		}
	}
}

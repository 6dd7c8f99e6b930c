package codegen

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/sema"
)

// compile checks and compiles src, which must pass the checker, with no
// kernel: its probes are BEGIN, END and timers.
func compile(t *testing.T, src string) (*Output, *token.File, error) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	info, errs := sema.Check(prog, nil)
	if errs.HasErrors() {
		t.Fatalf("check %q: %v", src, errs)
	}
	out, err := Compile(info, &Options{NumCPU: 2, File: f})
	return out, f, err
}

// insns returns the instructions of the first program.
func insns(t *testing.T, src string) asm.Instructions {
	t.Helper()
	out, _, err := compile(t, src)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	return out.Spec.Programs[out.Progs[0].Name].Instructions
}

// TestLineInfo checks the sources instructions carry: every function
// starts with one, as the kernel requires, and each names its statement.
func TestLineInfo(t *testing.T) {
	src := "BEGIN {\n  @m[1] = 1;\n  for ($kv : @m) { @x = $kv.1; }\n  $n = len(@m);\n  if (strcontains(\"ab\", \"b\")) { exit(); }\n}"
	prog := insns(t, src)
	funcs := 0
	var texts []string
	for i := range prog {
		in := &prog[i]
		s, _ := in.Source().(*Source)
		if btf.FuncMetadata(in) != nil {
			funcs++
			if s == nil {
				t.Errorf("function %v starts with no source", in)
			}
		}
		if s != nil {
			texts = append(texts, s.Text)
		}
	}
	if funcs != 4 {
		t.Errorf("%d functions, want the probe and 3 callbacks", funcs)
	}
	got := strings.Join(texts, "\n")
	for _, want := range []string{"BEGIN", "@m[1] = 1", "for ($kv : @m) { @x = $kv.1; }", "$n = len(@m)", `if (strcontains("ab", "b")) { exit(); }`} {
		if !strings.Contains(got, want) {
			t.Errorf("no instruction comes from %q; sources:\n%s", want, got)
		}
	}
	// SourceAt reads the last source at or before an instruction.
	if s := SourceAt(prog, 0); s == nil || s.Text != "BEGIN" {
		t.Errorf("SourceAt(0) = %v, want the probe", s)
	}
}

// TestCompileErrorLocated checks that an error of code generation is a
// diagnostic at the statement that caused it.
func TestCompileErrorLocated(t *testing.T) {
	deep := "1"
	for range 70 {
		deep = "1 + (" + deep + ")"
	}
	src := "BEGIN {\n  @y = 1;\n  @x = " + deep + ";\n}"
	_, f, err := compile(t, src)
	var l diag.List
	if !errors.As(err, &l) || len(l) != 1 {
		t.Fatalf("error %v, want one diagnostic", err)
	}
	pos := f.Position(l[0].Span.Start)
	if l[0].Msg != "expression too deep: out of BPF stack" || pos.Line != 3 || pos.Column != 3 {
		t.Errorf("got %q at %d:%d, want the out of stack error at 3:3", l[0].Msg, pos.Line, pos.Column)
	}
}

// TestGeneratedOps checks instructions the kernel would refuse or
// compute differently from bpftrace.
func TestGeneratedOps(t *testing.T) {
	tests := []struct {
		name, src string
		bad       func(asm.Instruction) bool
	}{
		// The kernel has no 8-bit byte swap: "invalid opcode".
		{"bswap of a byte", "BEGIN { @x = bswap((uint8)1); }", func(in asm.Instruction) bool {
			return in.OpCode.ALUOp() == asm.Swap && in.Constant == 8
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, in := range insns(t, tt.src) {
				if tt.bad(in) {
					t.Errorf("generated %v", in)
				}
			}
		})
	}
}

// TestShiftCount checks that a shift tests its count first: BPF takes
// it modulo 64, and 1 << 64 must be 0.
func TestShiftCount(t *testing.T) {
	for _, op := range []string{"<<", ">>"} {
		prog := insns(t, "BEGIN { $s = 64; @x = (uint64)1 "+op+" $s; @y = -1 "+op+" $s; }")
		guards, shifts := 0, 0
		for _, in := range prog {
			switch {
			case in.OpCode.JumpOp() == asm.JLT && in.Constant == 64:
				guards++
			case in.OpCode.ALUOp() == asm.LSh || in.OpCode.ALUOp() == asm.RSh || in.OpCode.ALUOp() == asm.ArSh:
				if in.OpCode.Source() == asm.RegSource {
					shifts++
				}
			}
		}
		if shifts != 2 || guards != shifts {
			t.Errorf("%s: %d shifts by a register, %d guarded, want 2 and 2", op, shifts, guards)
		}
	}
}

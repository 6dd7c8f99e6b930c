package sema

import (
	"fmt"
	"strings"
	"testing"

	"gtrace/internal/fakekernel"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/probe"
)

// TestFusion checks that syscall tracepoints run fused only when there
// are more than fuseAbove of them, and never with NoFusion.
func TestFusion(t *testing.T) {
	tests := []struct {
		probes   int
		noFusion bool
		fused    bool
	}{
		{fuseAbove, false, false},
		{fuseAbove + 1, false, true},
		{fuseAbove + 1, true, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/nofusion=%v", tt.probes, tt.noFusion), func(t *testing.T) {
			var src strings.Builder
			for i := range tt.probes {
				fmt.Fprintf(&src, "tracepoint:syscalls:sys_enter_%d { }\n", i)
			}
			f := token.NewFile("stdin", []byte(src.String()))
			prog, errs := parser.ParseFile(f)
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			expand := func(text string) ([]probe.Probe, error) {
				p := probe.Probe{Kind: probe.Tracepoint, Name: text, Target: "syscalls",
					Event: strings.TrimPrefix(text, "tracepoint:syscalls:"), Fused: &probe.Syscall{Nr: len(text)}}
				return []probe.Probe{p}, nil
			}
			info, errs := Check(prog, &Options{Config: DefaultConfig(), Expand: expand,
				Format: fakekernel.Format, NoFusion: tt.noFusion})
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			for _, p := range info.Progs {
				if got := p.Probe.Fused != nil; got != tt.fused {
					t.Errorf("%s fused %v, want %v", p.Probe.Name, got, tt.fused)
				}
			}
		})
	}
}

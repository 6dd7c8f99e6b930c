package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf/asm"

	"gtrace/codegen"
	"gtrace/internal/testutils"
)

// containerFilters are a cgroup filter on the hierarchy's root and a PID
// namespace filter: the tests check the code's place and that the
// kernel takes it, not whom it keeps, which tests/e2e checks.
var containerFilters = &codegen.Options{NumCPU: 2,
	Cgroup: &codegen.CgroupFilter{ID: 1, Level: 0},
	PidNS:  &codegen.PidNSFilter{Dev: 4, Ino: 4026531836}}

// helperCalls counts the calls of helper fn in the program named name.
func helperCalls(out *codegen.Output, name string, fn asm.BuiltinFunc) int {
	n := 0
	for _, in := range out.Spec.Programs[name].Instructions {
		if in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == fn {
			n++
		}
	}
	return n
}

// TestContainerFiltersPlace: every attached probe tests the filters
// once, BEGIN and END not at all.
func TestContainerFiltersPlace(t *testing.T) {
	out := compile(t, `begin { @b = 1; } tracepoint:sched:sched_switch { @s = count(); } end { @e = 1; }`, containerFilters)
	for _, p := range out.Progs {
		want := 1
		if p.Prog.Probe.Name == "begin" || p.Prog.Probe.Name == "end" {
			want = 0
		}
		for _, fn := range []asm.BuiltinFunc{asm.FnGetCurrentAncestorCgroupId, asm.FnGetNsCurrentPidTgid} {
			if got := helperCalls(out, p.Name, fn); got != want {
				t.Errorf("%s calls %v %d times, want %d", p.Prog.Probe.Name, fn, got, want)
			}
		}
	}
}

// TestVerifierContainerFilters loads each probe kind that this kernel
// has with both filters: every program type takes their helpers.
// tests/vm loads them on kprobes and fentry.
func TestVerifierContainerFilters(t *testing.T) {
	testutils.RequireRoot(t)
	for _, pk := range probeKinds {
		if src := probeSample(pk.attach); !inKernel(src) {
			t.Run(pk.name, func(t *testing.T) {
				load(t, compile(t, src, containerFilters))
			})
		}
	}
}

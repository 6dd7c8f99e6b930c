package runtime

import (
	"reflect"
	"testing"

	"gtrace/codegen"
	"gtrace/probe"
	"gtrace/sema"
)

// TestAttachWaves checks that probes on one event attach one wave apart,
// in the script's order or, for kinds whose programs the kernel runs
// newest first, the other way round; and that others attach at once.
func TestAttachWaves(t *testing.T) {
	progs := func(probes ...probe.Probe) []*codegen.Program {
		var out []*codegen.Program
		for _, p := range probes {
			out = append(out, &codegen.Program{Prog: &sema.Prog{Probe: p}})
		}
		return out
	}
	profile := probe.Probe{Kind: probe.Profile, Name: "profile:ms:1000"}
	uprobe := probe.Probe{Kind: probe.Uprobe, Name: "uprobe:/bin/bash:f"}
	// On f and g of /bin/bash, f as the uprobe above.
	multi := probe.Probe{Kind: probe.Uprobe, Name: "uprobe:/bin/bash:*", Target: "/bin/bash", Funcs: []string{"f", "g"}}
	other := probe.Probe{Kind: probe.Tracepoint, Name: "tracepoint:sched:sched_switch"}
	tests := []struct {
		name   string
		attach []*codegen.Program
		want   [][]int
	}{
		{"distinct", progs(profile, uprobe, other), [][]int{{0, 1, 2}}},
		{"in order", progs(profile, other, profile, profile), [][]int{{0, 1}, {2}, {3}}},
		{"newest first", progs(uprobe, other, uprobe, uprobe), [][]int{{1, 3}, {2}, {0}}},
		{"multi-uprobe", progs(uprobe, multi, other, multi), [][]int{{2, 3}, {1}, {0}}},
	}
	for _, tt := range tests {
		if got := attachWaves(tt.attach); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: attachWaves = %v, want %v", tt.name, got, tt.want)
		}
	}
}

package probe

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// bench:NAME is a micro benchmark, run only with --mode bench (--bench):
// gtrace runs it many times over through BPF_PROG_TEST_RUN and reports
// the kernel's mean time per run. As in bpftrace, it is an XDP program,
// the cheapest type whose test runs the kernel repeats and times.
func init() {
	register(&provider{kind: Bench, names: []string{"bench", "BENCH"},
		progType: ebpf.XDP, context: NoContext, parse: parseBench})
}

func parseBench(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) != 1 {
		return nil, fmt.Errorf("bench probe type requires 1 arguments, found %d", len(parts))
	}
	if parts[0] == "" {
		return nil, fmt.Errorf("bench probes must have a name")
	}
	return []Probe{{Kind: Bench, Name: "bench:" + parts[0], Target: parts[0]}}, nil
}

package probe

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// test:NAME is a test, run only with --mode test (--test): gtrace runs
// it once through BPF_PROG_TEST_RUN, and it passes when it returns 0,
// reports no error and exits with no other code. As in bpftrace, it is
// an XDP program, like a benchmark.
func init() {
	register(&provider{kind: Test, names: []string{"test"},
		progType: ebpf.XDP, context: NoContext, parse: parseTest})
}

func parseTest(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) != 1 {
		return nil, fmt.Errorf("test probe type requires 1 arguments, found %d", len(parts))
	}
	if parts[0] == "" {
		return nil, fmt.Errorf("test probes must have a name")
	}
	return []Probe{{Kind: Test, Name: "test:" + parts[0], Target: parts[0]}}, nil
}

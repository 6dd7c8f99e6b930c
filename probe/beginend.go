package probe

import (
	"fmt"

	"github.com/cilium/ebpf"
)

// BEGIN and END run once, through BPF_PROG_TEST_RUN, so they need no
// attachment at all. A raw tracepoint program is the cheapest type that
// the kernel lets user space run with helpers such as bpf_ringbuf_output.
func init() {
	register(&provider{kind: Begin, names: []string{"begin", "BEGIN"},
		progType: ebpf.RawTracepoint, context: NoContext, parse: special(Begin, "begin")})
	register(&provider{kind: End, names: []string{"end", "END"},
		progType: ebpf.RawTracepoint, context: NoContext, parse: special(End, "end")})
}

func special(k Kind, name string) func([]string, *Env) ([]Probe, error) {
	return func(parts []string, _ *Env) ([]Probe, error) {
		if len(parts) != 0 {
			return nil, fmt.Errorf("%s probe takes no arguments", name)
		}
		return []Probe{{Kind: k, Name: name}}, nil
	}
}

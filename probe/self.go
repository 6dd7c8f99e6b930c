package probe

import (
	"fmt"
	"slices"
	"syscall"

	"github.com/cilium/ebpf"
)

// self:signal:SIGUSR1 runs when gtrace itself receives SIGUSR1: like
// BEGIN and END, through BPF_PROG_TEST_RUN, attached to nothing.
func init() {
	register(&provider{kind: Self, names: []string{"self"},
		progType: ebpf.RawTracepoint, context: NoContext, parse: parseSelf,
		list: &listing{qualified: true, explicit: true,
			probes: func(*lister) ([]string, error) { return selfProbes(), nil }}})
}

// selfSignals are the signals a self:signal probe can wait for: those
// bpftrace accepts.
var selfSignals = map[string]syscall.Signal{"SIGUSR1": syscall.SIGUSR1}

func parseSelf(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) != 2 {
		return nil, fmt.Errorf("self probe must have the form self:signal:SIGNAL")
	}
	trigger, sig := parts[0], parts[1]
	if trigger != "signal" {
		return nil, fmt.Errorf("%s is not a supported trigger", trigger)
	}
	if _, ok := selfSignals[sig]; !ok {
		return nil, fmt.Errorf("%s is not a supported signal", sig)
	}
	return []Probe{{Kind: Self, Name: "self:signal:" + sig, Target: trigger, Event: sig}}, nil
}

// selfProbes lists "signal:SIGNAL" for each signal, as -l shows them.
func selfProbes() []string {
	var out []string
	for name := range selfSignals {
		out = append(out, "signal:"+name)
	}
	slices.Sort(out)
	return out
}

// Signal is the signal that runs a self:signal probe, and 0 for any other
// probe.
func (p *Probe) Signal() syscall.Signal {
	if p.Kind != Self {
		return 0
	}
	return selfSignals[p.Event]
}

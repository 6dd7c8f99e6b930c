package probe

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
)

func init() {
	register(&provider{kind: Tracepoint, names: []string{"tracepoint", "t"},
		progType: ebpf.TracePoint, parse: parseTracepoint, attach: attachTracepoint})
}

func parseTracepoint(parts []string) ([]Probe, error) {
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return nil, fmt.Errorf("tracepoint probe must have the form tracepoint:category:event")
	}
	pattern := parts[0] + ":" + parts[1]
	names, err := kernel.ExpandTracepoints(pattern)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 && !kernel.HasWildcard(pattern) {
		return nil, fmt.Errorf("tracepoint not found: %s", pattern)
	}
	probes := make([]Probe, 0, len(names))
	for _, n := range names {
		cat, ev, _ := strings.Cut(n, ":")
		probes = append(probes, Probe{Kind: Tracepoint, Name: "tracepoint:" + n, Target: cat, Event: ev})
	}
	return probes, nil
}

func attachTracepoint(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.Tracepoint(p.Target, p.Event, prog, nil)
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

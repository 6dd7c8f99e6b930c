package probe

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

func init() {
	register(&provider{kind: RawTracepoint, names: []string{"rawtracepoint", "rt"},
		progType: ebpf.RawTracepoint, parse: parseRawTracepoint, attach: attachRawTracepoint})
}

// parseRawTracepoint accepts rawtracepoint:name and rawtracepoint:module:name;
// the kernel looks raw tracepoints up by name alone.
func parseRawTracepoint(parts []string) ([]Probe, error) {
	if len(parts) < 1 || len(parts) > 2 || parts[len(parts)-1] == "" {
		return nil, fmt.Errorf("rawtracepoint probe must have the form rawtracepoint:[module:]name")
	}
	name := parts[len(parts)-1]
	return []Probe{{Kind: RawTracepoint, Name: "rawtracepoint:" + name, Event: name}}, nil
}

func attachRawTracepoint(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.Event, Program: prog})
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

package probe

import (
	"fmt"
	"gtrace/lang/builtin"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
)

func init() {
	register(&provider{kind: RawTracepoint, names: []string{"rawtracepoint", "rt"},
		progType: ebpf.RawTracepoint, context: RawArgs, builtins: []builtin.Var{builtin.ArgN, builtin.Args},
		parse: parseRawTracepoint, attach: attachRawTracepoint,
		list: &listing{qualified: true, probes: (*lister).rawTracepoints, params: (*lister).rawTracepointParams}})
}

// rawTracepoints lists "module:name" for every raw tracepoint in vmlinux
// and module BTF.
func (l *lister) rawTracepoints() ([]string, error) {
	if l.rawParams == nil {
		raw, err := kernel.RawTracepoints()
		if err != nil {
			return nil, err
		}
		l.rawParams = raw
	}
	out := make([]string, 0, len(l.rawParams))
	for name := range l.rawParams {
		out = append(out, name)
	}
	return out, nil
}

func (l *lister) rawTracepointParams(probe string) ([]string, error) {
	return l.rawParams[probe], nil
}

// parseRawTracepoint accepts rawtracepoint:name and rawtracepoint:module:name;
// the kernel looks raw tracepoints up by name alone.
func parseRawTracepoint(parts []string) ([]Probe, error) {
	if len(parts) < 1 || len(parts) > 2 || parts[len(parts)-1] == "" {
		return nil, fmt.Errorf("rawtracepoint probe must have the form rawtracepoint:[module:]name")
	}
	name := parts[len(parts)-1]
	module := "*"
	if len(parts) == 2 {
		module = parts[0]
	}
	if err := rawTracepointExists(module, name); err != nil {
		return nil, err
	}
	return []Probe{{Kind: RawTracepoint, Name: "rawtracepoint:" + name, Event: name}}, nil
}

// rawTracepointExists looks name up among the raw tracepoints the
// kernel's BTF lists, in module or any ("*"), so that a misspelt one is
// refused with its place in the script rather than when attaching.
// Without kernel BTF, or when it cannot be read, there is no list, and
// the attach decides.
func rawTracepointExists(module, name string) error {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil || kernel.HasWildcard(name) {
		return nil
	}
	found, err := List("rawtracepoint:"+module+":"+name, ListOptions{})
	if err != nil {
		return nil
	}
	if len(found) == 0 && module != "*" {
		return fmt.Errorf("raw tracepoint not found: %s:%s", module, name)
	}
	if len(found) == 0 {
		return fmt.Errorf("raw tracepoint not found: %s", name)
	}
	return nil
}

func attachRawTracepoint(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.Event, Program: prog})
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

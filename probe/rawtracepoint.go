package probe

import (
	"fmt"
	"gtrace/lang/builtin"
	"os"
	"slices"
	"strings"

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

// parseRawTracepoint accepts rawtracepoint:[module:]name, with
// wildcards in either part; the kernel looks raw tracepoints up by name
// alone. A name that is missing from a module named without wildcards is
// missing (missing_probes); one missing from every module is no probe.
func parseRawTracepoint(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) < 1 || len(parts) > 2 || parts[len(parts)-1] == "" {
		return nil, fmt.Errorf("rawtracepoint probe must have the form rawtracepoint:[module:]name")
	}
	name := parts[len(parts)-1]
	module := "*"
	if len(parts) == 2 {
		module = parts[0]
	}
	names, err := rawTracepoints(module, name)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 && !kernel.HasWildcard(module) && !kernel.HasWildcard(name) {
		return nil, &MissingError{Provider: "rawtracepoint", Target: module + ":" + name,
			Reason: "raw tracepoint not found: " + module + ":" + name}
	}
	probes := make([]Probe, 0, len(names))
	for _, n := range names {
		probes = append(probes, Probe{Kind: RawTracepoint, Name: "rawtracepoint:" + n, Event: n})
	}
	return probes, nil
}

// rawTracepoints lists the names of the raw tracepoints in module
// matching name, from the kernel's BTF (vmlinux and modules). Without
// kernel BTF there is no list: a name without wildcards is taken as it
// is, and the attach decides.
func rawTracepoints(module, name string) ([]string, error) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		if kernel.HasWildcard(module) || kernel.HasWildcard(name) {
			return nil, fmt.Errorf("rawtracepoint:%s:%s: wildcards need the kernel's BTF (/sys/kernel/btf/vmlinux)", module, name)
		}
		return []string{name}, nil
	}
	// A name alone is looked up by name, not in the list of all raw
	// tracepoints, which decodes all of the kernel's BTF.
	if module == "*" && !kernel.HasWildcard(name) {
		ok, err := kernel.HasRawTracepoint(name)
		if err != nil || !ok {
			return nil, err
		}
		return []string{name}, nil
	}
	found, err := List("rawtracepoint:"+module+":"+name, ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range found {
		names = append(names, f[strings.LastIndex(f, ":")+1:])
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func attachRawTracepoint(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.Event, Program: prog})
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

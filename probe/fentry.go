package probe

import (
	"fmt"
	"gtrace/kernel"
	"gtrace/lang/builtin"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

func init() {
	register(&provider{kind: Fentry, newestFirst: true, names: []string{"fentry", "f", "kfunc"},
		progType: ebpf.Tracing, attachType: ebpf.AttachTraceFEntry,
		context: BTFArgs, builtins: []builtin.Var{builtin.Args, builtin.Func},
		parse: parseFentry(Fentry), attach: attachFentry,
		list: listFentry(false)})
	register(&provider{kind: Fexit, newestFirst: true, names: []string{"fexit", "fr", "kretfunc"},
		progType: ebpf.Tracing, attachType: ebpf.AttachTraceFExit,
		context: BTFArgs, builtins: []builtin.Var{builtin.Args, builtin.Func, builtin.Retval},
		parse: parseFentry(Fexit), attach: attachFentry,
		list: listFentry(true)})
}

// listFentry lists the functions that have BTF, whether or not this
// kernel lets programs bind to them. Their parameters, and fexit's
// retval, are their arguments. As in bpftrace, fexit is listed only when
// asked by name.
func listFentry(retval bool) *listing {
	return &listing{explicit: retval,
		probes: func(l *lister) ([]string, error) {
			all, err := l.traceable()
			if err != nil {
				return nil, err
			}
			return kernel.BTFFunctions(all)
		},
		params: func(_ *lister, fn string) ([]string, error) { return kernel.FuncParams(fn, retval) }}
}

// parseFentry accepts fentry:func, fentry:module:func and wildcards.
// The program is bound to its function when it is loaded.
func parseFentry(kind Kind) func(parts []string, _ *Env) ([]Probe, error) {
	name := "fentry"
	if kind == Fexit {
		name = "fexit"
	}
	return func(parts []string, _ *Env) ([]Probe, error) {
		if len(parts) < 1 || len(parts) > 2 || parts[len(parts)-1] == "" {
			return nil, fmt.Errorf("%s probe must have the form %s:[module:]function", name, name)
		}
		fn := strings.Join(parts, ":")
		// A function the kernel lacks is missing, as missing_probes
		// judges it, not a load that fails later.
		funcs, err := kernel.ExpandFunctions(fn)
		if err != nil {
			return nil, err
		}
		if len(funcs) == 0 && !kernel.HasWildcard(fn) {
			return nil, &MissingError{Provider: name, Target: fn, Reason: "function not found: " + fn}
		}
		probes := make([]Probe, 0, len(funcs))
		for _, f := range funcs {
			probes = append(probes, Probe{Kind: kind, Name: name + ":" + f, Event: f})
		}
		return probes, nil
	}
}

func attachFentry(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.AttachTracing(link.TracingOptions{Program: prog})
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

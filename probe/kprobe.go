package probe

import (
	"errors"
	"fmt"
	"gtrace/lang/builtin"
	"gtrace/lang/token"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
)

func init() {
	register(&provider{kind: Kprobe, newestFirst: true, names: []string{"kprobe", "k"},
		progType: ebpf.Kprobe, context: Registers, builtins: []builtin.Var{builtin.ArgN, builtin.Func},
		parse: parseKprobe(Kprobe), attach: attachKprobe,
		list: &listing{probes: (*lister).traceable}})
	register(&provider{kind: Kretprobe, names: []string{"kretprobe", "kr"},
		progType: ebpf.Kprobe, context: Registers, builtins: []builtin.Var{builtin.Func, builtin.Retval},
		parse: parseKprobe(Kretprobe), attach: attachKprobe,
		list: &listing{explicit: true, probes: (*lister).traceable}})
}

// traceable lists the kernel functions kprobes can attach to, as tracefs
// (or kallsyms) lists them, also on a kernel without kprobes, as
// bpftrace does; read once per listing.
func (l *lister) traceable() ([]string, error) {
	if l.funcs == nil {
		funcs, err := kernel.TraceableFunctions()
		if err != nil {
			return nil, err
		}
		l.funcs = funcs
	}
	return l.funcs, nil
}

// parseKprobe accepts kprobe:func, kprobe:func+offset, kprobe:module:func,
// kprobe:address and wildcards over the functions tracefs lists as traceable.
func parseKprobe(kind Kind) func(parts []string, _ *Env) ([]Probe, error) {
	return func(parts []string, _ *Env) ([]Probe, error) {
		name := "kprobe"
		if kind == Kretprobe {
			name = "kretprobe"
		}
		if len(parts) < 1 || len(parts) > 2 || parts[len(parts)-1] == "" {
			return nil, fmt.Errorf("%s probe must have the form %s:[module:]function", name, name)
		}
		fn := strings.Join(parts, ":")
		if fn[0] >= '0' && fn[0] <= '9' && kind == Kprobe {
			addr, err := token.ParseInt(fn)
			if err != nil {
				return nil, fmt.Errorf("%s:%s: invalid address: %w", name, fn, err)
			}
			return []Probe{{Kind: kind, Name: name + ":" + strconv.FormatUint(addr, 10), Address: addr}}, nil
		}
		var offset uint64
		if f, off, ok := strings.Cut(fn, "+"); ok {
			if kind == Kretprobe || kernel.HasWildcard(fn) {
				return nil, fmt.Errorf("%s:%s: an offset is only allowed on a single kprobe", name, fn)
			}
			n, err := strconv.ParseUint(off, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%s: invalid offset %q", name, fn, off)
			}
			fn, offset = f, n
		}
		funcs, err := kernelFunctions(fn)
		if err != nil {
			return nil, err
		}
		if len(funcs) > 1 && kernel.HasKprobeMulti() {
			// One program on every function, attached in one system
			// call: a function's probe and func come from its cookie.
			return []Probe{{Kind: kind, Name: name + ":" + fn, Event: fn, Funcs: funcs}}, nil
		}
		probes := make([]Probe, 0, len(funcs))
		for _, f := range funcs {
			p := Probe{Kind: kind, Name: name + ":" + f, Event: f, Offset: offset}
			if offset != 0 {
				p.Name += "+" + strconv.FormatUint(offset, 10)
			}
			probes = append(probes, p)
		}
		return probes, nil
	}
}

// kernelFunctions expands a function pattern over the traceable kernel
// functions; a name without a wildcard stands for itself.
func kernelFunctions(fn string) ([]string, error) {
	if !kernel.HasWildcard(fn) {
		return []string{fn}, nil
	}
	return kernel.ExpandFunctions(fn)
}

// attachKprobe attaches through the kprobe PMU, so that the probe goes
// away with gtrace's file descriptors.
func attachKprobe(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	if p.Funcs != nil {
		return attachKprobeMulti(p, prog)
	}
	if p.Address != 0 {
		l, err := openProbe("kprobe", "", p.Address, false, 0, prog)
		if err != nil {
			return nil, err
		}
		return []link.Link{l}, nil
	}
	fn := p.Func() // the kernel finds module functions by name
	var l link.Link
	var err error
	if p.Kind == Kretprobe {
		l, err = link.Kretprobe(fn, prog, nil)
	} else {
		l, err = link.Kprobe(fn, prog, &link.KprobeOptions{Offset: p.Offset})
	}
	switch {
	case err == nil:
		return []link.Link{l}, nil
	case !kernel.HasKprobes():
		return nil, fmt.Errorf("this kernel has no kprobes (neither a kprobe PMU nor tracefs kprobe_events): %w", err)
	case errors.Is(err, os.ErrNotExist):
		// cilium/ebpf retries a probe the kernel refuses on the
		// function's __x64_ name and reports only that second attempt:
		// say why from what the kernel lists.
		return nil, errors.New(kernel.WhyNotTraceable(fn))
	}
	return nil, err
}

// Func is the name of the kernel function a probe is on, for the func
// builtin: without a module prefix.
func (p *Probe) Func() string {
	fn := p.Event
	if i := strings.LastIndex(fn, ":"); i >= 0 {
		fn = fn[i+1:]
	}
	return fn
}

// attachKprobeMulti attaches one program to every function of a
// wildcard, each with its index in p.Funcs as the cookie.
func attachKprobeMulti(p *Probe, prog *ebpf.Program) ([]link.Link, error) {
	opts := link.KprobeMultiOptions{}
	for i, f := range p.Funcs {
		if j := strings.LastIndex(f, ":"); j >= 0 {
			f = f[j+1:]
		}
		opts.Symbols = append(opts.Symbols, f)
		opts.Cookies = append(opts.Cookies, uint64(i))
	}
	var l link.Link
	var err error
	if p.Kind == Kretprobe {
		l, err = link.KretprobeMulti(prog, opts)
	} else {
		l, err = link.KprobeMulti(prog, opts)
	}
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

// FuncName is the name of a multi-kprobe's i-th function, for func,
// and its probe's, for probe.
func (p *Probe) FuncName(i int) (fn, probe string) {
	f := p.Funcs[i]
	provider, _, _ := strings.Cut(p.Name, ":")
	if p.UserSpace() {
		return f, provider + ":" + p.Target + ":" + f // as its own uprobe is named
	}
	if j := strings.LastIndex(f, ":"); j >= 0 {
		return f[j+1:], provider + ":" + f
	}
	return f, provider + ":" + f
}

// NameSize is the room, NUL included, that a multi-kprobe's probe and
// func builtins need: the longest of its names.
func (p *Probe) NameSize() int {
	n := max(len(p.Name), len(p.Func()))
	for i := range p.Funcs {
		fn, probe := p.FuncName(i)
		n = max(n, len(fn), len(probe))
	}
	return n + 1
}

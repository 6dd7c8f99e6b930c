package probe

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"

	"gtrace/symbol"
)

// A multi-uprobe is one program on many functions of one binary,
// attached through one uprobe_multi link (Linux 6.6), registered in
// one system call instead of one perf event and one link per
// function. As for a multi-kprobe, the attach cookie is the function's
// index in Funcs, by which the program finds its probe and func names.

// HasUprobeMulti reports whether the kernel has uprobe_multi links.
// --no-feature uprobe_multi replaces it.
var HasUprobeMulti = sync.OnceValue(func() bool { return features.HaveBPFLinkUprobeMulti() == nil })

// maxMultiJSON bounds the JSON size of one multi-uprobe's function
// names, so that the request to attach it fits one message to the
// process that attaches user-space probes; a larger wildcard is split.
const maxMultiJSON = 32 << 10

// JoinUprobes joins the uprobes or uretprobes that the attach point
// text expanded to into one multi-uprobe per binary. A probe that would
// attach otherwise on its own stays on its own: one on an address or an
// offset, a C++ name, a function uprobeOffset would refuse (so that its
// own attach says why), or the only function of its binary.
func JoinUprobes(text string, probes []Probe) []Probe {
	parts := splitParts(text)
	pattern := parts[len(parts)-1]
	joined := map[string]multiTarget{} // by binary
	for _, t := range joinable(probes) {
		joined[t.path] = t
	}
	var out []Probe
	done := map[string]bool{}
	for _, p := range probes {
		t, ok := joined[p.Target]
		switch {
		case !ok || !plainFunction(&p) || !t.funcs[p.Event]:
			out = append(out, p)
		case !done[p.Target]:
			done[p.Target] = true
			out = append(out, t.multi(pattern)...)
		}
	}
	return out
}

// multiTarget is a binary and the functions of its probes that one
// multi-uprobe can attach, in their order.
type multiTarget struct {
	path  string
	probe Probe // the first, for its kind and options
	order []string
	funcs map[string]bool
}

// joinable lists the binaries with at least two probes to join.
func joinable(probes []Probe) []multiTarget {
	byPath := map[string]*multiTarget{}
	var paths []string
	for _, p := range probes {
		if !plainFunction(&p) {
			continue
		}
		t := byPath[p.Target]
		if t == nil {
			t = &multiTarget{path: p.Target, probe: p, funcs: map[string]bool{}}
			byPath[p.Target] = t
			paths = append(paths, p.Target)
		}
		t.order = append(t.order, p.Event)
	}
	var out []multiTarget
	for _, path := range paths {
		t := byPath[path]
		syms, err := symbol.LookupFuncs(path, t.order)
		if err != nil {
			continue
		}
		var ok []string
		for _, f := range t.order {
			if s, found := syms[f]; found && s.FileOffset != 0 && (s.Size > 0 || t.probe.Unsafe) && !t.funcs[f] {
				ok = append(ok, f)
				t.funcs[f] = true
			}
		}
		if len(ok) > 1 {
			t.order = ok
			out = append(out, *t)
		}
	}
	return out
}

// plainFunction reports whether p is a uprobe or uretprobe at the start
// of a function, named as such.
func plainFunction(p *Probe) bool {
	return (p.Kind == Uprobe || p.Kind == Uretprobe) && p.Event != "" && p.Offset == 0 && p.Address == 0 &&
		p.Funcs == nil && p.Name == p.Kind.String()+":"+p.Target+":"+p.Event
}

// multi makes t's multi-uprobes, named after the function pattern, as
// few as maxMultiJSON allows.
func (t multiTarget) multi(pattern string) []Probe {
	var out []Probe
	size := 0
	for _, f := range t.order {
		b, _ := json.Marshal(f)
		if len(out) == 0 || size+len(b) > maxMultiJSON {
			out = append(out, Probe{Kind: t.probe.Kind, Name: t.probe.Kind.String() + ":" + t.path + ":" + pattern,
				Target: t.path, Event: pattern, Unsafe: t.probe.Unsafe})
			size = 0
		}
		m := &out[len(out)-1]
		m.Funcs = append(m.Funcs, f)
		size += len(b) + 1
	}
	return out
}

// attachUprobeMulti attaches prog to each function of p at once, with
// its index in p.Funcs as its cookie. pid, when not 0, limits it to that
// process.
func attachUprobeMulti(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error) {
	syms, err := symbol.LookupFuncs(p.Target, p.Funcs)
	if err != nil {
		return nil, err
	}
	opts := &link.UprobeMultiOptions{PID: uint32(pid)}
	for i, f := range p.Funcs {
		s, ok := syms[f]
		if !ok || s.FileOffset == 0 {
			return nil, fmt.Errorf("Could not resolve symbol: %s:%s", p.Target, f)
		}
		opts.Addresses = append(opts.Addresses, s.FileOffset)
		opts.Cookies = append(opts.Cookies, uint64(i))
	}
	ex, err := link.OpenExecutable(p.Target)
	if err != nil {
		return nil, err
	}
	var l link.Link
	if p.Kind == Uretprobe {
		l, err = ex.UretprobeMulti(nil, prog, opts)
	} else {
		l, err = ex.UprobeMulti(nil, prog, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("uprobe_multi %s (%d functions): %w", p.Target, len(p.Funcs), err)
	}
	return []link.Link{l}, nil
}

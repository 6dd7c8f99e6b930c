package probe

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
)

// iter:NAME runs a program on each object of one of the kernel's
// iterators (task, task_file, task_vma, ...), which the kernel describes
// in BTF as struct bpf_iter__NAME, the program's context. gtrace reads
// the iterator to its end once attached, and prints what its program
// printed; iter:NAME:PIN pins the iterator instead, for anyone to read.
func init() {
	register(&provider{kind: Iter, names: []string{"iter", "it"},
		progType: ebpf.Tracing, attachType: ebpf.AttachTraceIter, context: IterContext,
		parse: parseIter, attach: attachIter,
		list: &listing{probes: func(*lister) ([]string, error) { return kernel.Iterators() }}})
}

// parseIter accepts iter:NAME and iter:NAME:PIN, with bpftrace's errors.
func parseIter(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) != 1 && len(parts) != 2 {
		return nil, fmt.Errorf("iter probe type takes 2 arguments (1 optional)")
	}
	if slices.ContainsFunc(parts, kernel.HasWildcard) {
		return nil, fmt.Errorf("iter probe type does not support wildcards")
	}
	name := parts[0]
	if name == "" {
		return nil, fmt.Errorf("iter should specify a iterator's name")
	}
	if all, err := kernel.Iterators(); err == nil && !slices.Contains(all, name) {
		return nil, fmt.Errorf("iter %s not available for your kernel version.", name)
	}
	p := Probe{Kind: Iter, Name: "iter:" + name, Event: name}
	if len(parts) == 2 {
		p.Pin = parts[1]
		p.Name += ":" + p.Pin
	}
	return []Probe{p}, nil
}

// PinPath is where an iterator's link is pinned: Pin, relative to
// /sys/fs/bpf unless absolute.
func (p *Probe) PinPath() string {
	if filepath.IsAbs(p.Pin) {
		return p.Pin
	}
	return filepath.Join("/sys/fs/bpf", p.Pin)
}

func attachIter(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	it, err := link.AttachIter(link.IterOptions{Program: prog})
	if err != nil {
		return nil, err
	}
	if p.Pin != "" {
		if err := it.Pin(p.PinPath()); err != nil {
			it.Close()
			return nil, errors.New("Failed to pin iter probe link: " + err.Error())
		}
	}
	return []link.Link{it}, nil
}

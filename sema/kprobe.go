package sema

import (
	"fmt"
	"strings"
	"sync"

	"gtrace/kernel"
	"gtrace/lang/ast"
	"gtrace/probe"
)

// checkKprobes warns, as bpftrace does, of kprobes that will not attach:
// on a kernel without kprobes, or on a function it does not list as
// traceable. They load all the same, so --dry-run still passes.
func (c *checker) checkKprobes(ap *ast.AttachPoint, probes []probe.Probe) {
	if len(probes) == 0 || probes[0].Kind != probe.Kprobe && probes[0].Kind != probe.Kretprobe ||
		c.opts.Config.MissingProbes == "ignore" {
		return
	}
	if !c.opts.HasKprobes() {
		c.errs.Warn(ap.Span(), "this kernel has no kprobes (no kprobe PMU, no kprobe_events in tracefs): %s can not attach", ap.Text)
	}
	if len(probes) == 1 && probes[0].Funcs == nil && probes[0].Address == 0 {
		if err := c.opts.Traceable(probes[0].Event); err != nil {
			c.errs.Warn(ap.Span(), "%v", err)
		}
	}
}

// errNotTraceable is bpftrace's warning for a kprobe on a function that
// is not traceable.
func errNotTraceable(fn string) error {
	return fmt.Errorf(`%s is not traceable (either non-existing, inlined, or marked as "notrace"); attaching to it will likely fail`, fn)
}

// traceableFuncs lists the traceable kernel functions once per run.
var traceableFuncs = sync.OnceValues(kernel.TraceableFunctions)

// traceable is Options.Traceable from the kernel's lists: fn is
// "function" or "module:function".
func traceable(fn string) error {
	funcs, err := traceableFuncs()
	if err != nil {
		return nil // no list to judge by: let the attach say
	}
	for _, f := range funcs {
		if f == fn || !strings.Contains(fn, ":") && strings.HasSuffix(f, ":"+fn) {
			return nil
		}
	}
	return errNotTraceable(fn)
}

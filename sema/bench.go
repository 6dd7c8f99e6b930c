package sema

import (
	"fmt"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/probe"
)

// checkBenchNames refuses two bench probes, or two test probes, of one
// name, whose results could not be told apart, with bpftrace's message.
func (c *checker) checkBenchNames() {
	for _, k := range []struct {
		kind probe.Kind
		word string
	}{{probe.Bench, "BENCH"}, {probe.Test, "TEST"}} {
		kind, word := k.kind, k.word
		seen := map[string]*ast.AttachPoint{}
		for _, p := range c.info.Progs {
			if p.Probe.Kind != kind {
				continue
			}
			other := seen[p.Probe.Target]
			if other == nil {
				seen[p.Probe.Target] = p.Attach
				continue
			}
			c.errs = append(c.errs, &diag.Error{Span: p.Attach.Span(),
				Msg:   fmt.Sprintf("%q was used as the name for more than one %s probe", p.Probe.Target, word),
				Notes: []*diag.Error{{Span: other.Span(), Msg: "this is the other instance"}}})
		}
	}
}

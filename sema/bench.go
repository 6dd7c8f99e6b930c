package sema

import (
	"fmt"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/probe"
)

// checkBenchNames refuses two bench probes of one name, whose results
// could not be told apart, with bpftrace's message.
func (c *checker) checkBenchNames() {
	seen := map[string]*ast.AttachPoint{}
	for _, p := range c.info.Progs {
		if p.Probe.Kind != probe.Bench {
			continue
		}
		other := seen[p.Probe.Target]
		if other == nil {
			seen[p.Probe.Target] = p.Attach
			continue
		}
		c.errs = append(c.errs, &diag.Error{Span: p.Attach.Span(),
			Msg:   fmt.Sprintf("%q was used as the name for more than one BENCH probe", p.Probe.Target),
			Notes: []*diag.Error{{Span: other.Span(), Msg: "this is the other instance"}}})
	}
}

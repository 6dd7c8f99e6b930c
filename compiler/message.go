package compiler

import (
	"slices"
	"strings"

	"gtrace/codegen"
	"gtrace/lang/diag"
)

// message renders the place of an errorf() or warnf() as bpftrace prints
// it with each message: the call's location, on a first line that ends
// where the message goes, then "expanded from" and the source of each
// macro call it is in, innermost first.
func (p *Program) message(ev *codegen.Event) string {
	e := &diag.Error{Span: ev.At, Warning: ev.Kind == codegen.EvWarnf, Brief: true}
	for _, at := range slices.Backward(ev.Expanded) {
		e.Notes = append(e.Notes, &diag.Error{Span: at, Msg: "expanded from"})
	}
	var b strings.Builder
	p.located(diag.List{e}).Render(&b)
	return b.String()
}

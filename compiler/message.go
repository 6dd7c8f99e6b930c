package compiler

import (
	"slices"
	"strings"

	"gtrace/codegen"
	"gtrace/lang/diag"
	"gtrace/output"
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
	located := p.located(diag.List{e})
	var b strings.Builder
	located.Render(&b)
	at, f := located.Diags[0], p.File
	if at.File != nil {
		f = at.File
	}
	pos := f.Position(at.Span.Start)
	ev.Loc = output.Location{File: f.Name, Line: pos.Line, Col: pos.Column}
	return b.String()
}

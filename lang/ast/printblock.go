package ast

// blockExpr prints a block expression as a nested block statement
// prints: its statements, then its value without a ';', on one line
// when they fit.
func (p *printer) blockExpr(b *BlockExpr, w uint) *layout {
	body := newLayout()
	for i, s := range b.Stmts {
		l := p.stmt(s, w-2, withValue, false)
		if l.width() > 0 && i > 0 {
			body.lineBreak()
		}
		body.add(l, 0)
	}
	if b.Value != nil {
		if len(b.Stmts) > 0 {
			body.lineBreak()
		}
		body.add(p.expr(b.Value, w-2, true), 0)
	}
	if body.numLines() > 1 || body.width() > w {
		return textLayout("{").add(body, indent).text("}")
	}
	return textLayout("{ ").add(body, 0).text(" }")
}

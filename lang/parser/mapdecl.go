package parser

import (
	"math"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// parseMapDecl parses a top-level map declaration, `let @a = hash(10);`.
// The map type's name is checked later, as bpftrace does; its size must
// be a positive integer that the kernel can take.
func (p *parser) parseMapDecl() *ast.MapDecl {
	start := p.span.Start
	p.expect(token.LET)
	d := &ast.MapDecl{Map: &ast.Map{At: ast.At{Sp: p.span}, Name: p.lit}}
	p.expect(token.MAP)
	p.expect(token.ASSIGN)
	if p.tok != token.IDENT {
		p.unexpected("map type name")
	}
	d.Kind = p.lit
	p.next()
	p.expect(token.LPAREN)
	n, err := token.ParseInt(p.lit)
	if p.tok != token.INT || err != nil || n == 0 || n > math.MaxUint32 {
		p.errorAt(p.span, "syntax: expected positive integer for map declaration max entries")
		panic(syntaxError{})
	}
	d.MaxEntries = n
	p.next()
	p.expect(token.RPAREN)
	p.got(token.SEMI)
	d.At = p.from(start)
	return d
}

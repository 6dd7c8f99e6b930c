package parser

import (
	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/token"
)

// parseMacro parses `macro name(x, $y, @z) { ... }`.
func (p *parser) parseMacro() *ast.Macro {
	start := p.expect(token.MACRO).Start
	if p.tok != token.IDENT {
		p.unexpected("identifier")
	}
	m := &ast.Macro{Name: p.lit}
	p.next()
	m.Head = token.Span{Start: start, End: p.prevEnd}
	p.expect(token.LPAREN, "(")
	for p.tok != token.RPAREN {
		m.Params = append(m.Params, p.parseMacroParam())
		if !p.got(token.COMMA) && p.tok != token.RPAREN {
			p.unexpected(")", `","`)
		}
	}
	p.next()
	m.Body = p.parseBlockExpr()
	m.At = p.from(start)
	return m
}

// parseMacroParam parses one parameter: a name, which takes any
// expression, a $variable or a @map.
func (p *parser) parseMacroParam() ast.Expr {
	at := ast.At{Sp: p.span}
	var x ast.Expr
	switch p.tok {
	case token.VAR:
		x = &ast.Var{At: at, Name: p.lit}
	case token.MAP:
		x = &ast.Map{At: at, Name: p.lit}
	case token.IDENT:
		if builtin.Reserved(p.lit) {
			p.errorAt(p.span, "builtin '%s' can't be used as a macro argument", p.lit)
		}
		x = &ast.Ident{At: at, Name: p.lit}
	default:
		p.unexpected("variable", "map", "identifier")
	}
	p.next()
	return x
}

// parseBlockExpr parses a block used as an expression. Its last
// expression is its value when no ';' follows it.
func (p *parser) parseBlockExpr() *ast.BlockExpr {
	p.enter()
	defer p.leave()
	start := p.expect(token.LBRACE, "{").Start
	b := &ast.BlockExpr{}
	// The end of the last statement parsed: when its own span ends
	// there too, no ';' followed it.
	end := token.NoPos
	for p.tok != token.RBRACE && p.tok != token.EOF {
		p.recovering(func() {
			b.Stmts = append(b.Stmts, p.parseBlockItem())
			end = p.prevEnd
		}, p.syncStmt)
	}
	p.expect(token.RBRACE, "}")
	b.At = p.from(start)
	if n := len(b.Stmts); n > 0 {
		if s, ok := b.Stmts[n-1].(*ast.ExprStmt); ok && s.Sp.End == end {
			b.Value = s.X
			b.Stmts = b.Stmts[:n-1]
		}
	}
	return b
}

// parseBlockItem parses one statement of a block expression. A block
// nested there is an expression too, which may be the value, and needs
// no ';' after it.
func (p *parser) parseBlockItem() ast.Stmt {
	var x ast.Expr
	switch {
	case p.tok == token.IF && p.attempt(func() bool {
		x = p.parseIfExpr()
		return p.tok == token.RBRACE && hasValue(x)
	}):
		// An if whose branches have values and that ends the block is
		// its value.
		return &ast.ExprStmt{At: ast.At{Sp: x.Span()}, X: x}
	case p.tok != token.LBRACE:
		return p.parseStmt()
	}
	x = p.parseBlockExpr()
	if p.tok != token.RBRACE {
		p.got(token.SEMI)
	}
	return &ast.ExprStmt{At: ast.At{Sp: x.Span()}, X: x}
}

// parseIfExpr parses `if cond { a } else { b }` as an expression, a
// ternary whose branches are block expressions; `else if` nests another.
func (p *parser) parseIfExpr() ast.Expr {
	p.enter()
	defer p.leave()
	start := p.expect(token.IF).Start
	e := &ast.Ternary{Cond: p.parseCond()}
	e.Then = p.parseBlockExpr()
	p.expect(token.ELSE, "else")
	if p.tok == token.IF {
		e.Else = p.parseIfExpr()
	} else {
		e.Else = p.parseBlockExpr()
	}
	e.At = p.from(start)
	return e
}

// hasValue reports whether every branch of an if expression ends in a
// value.
func hasValue(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ternary:
		return hasValue(x.Then) && hasValue(x.Else)
	case *ast.BlockExpr:
		return x.Value != nil
	}
	return true
}

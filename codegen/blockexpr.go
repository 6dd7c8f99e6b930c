package codegen

import (
	"gtrace/lang/ast"
	"gtrace/sema"
)

// blockStmts generates the statements of a block expression, and its
// value when that has none, such as a printf() or an exit() last in the
// block, which runs as the statement it is.
func (g *gen) blockStmts(b *ast.BlockExpr) {
	for _, s := range b.Stmts {
		g.stmt(s, g.exit)
	}
	if b.Value != nil && g.typ(b.Value).Kind == sema.Void {
		g.stmt(&ast.ExprStmt{At: ast.At{Sp: b.Value.Span()}, X: b.Value}, g.exit)
	}
}

// blockScalar evaluates a block expression with an integer value into R0.
func (g *gen) blockScalar(b *ast.BlockExpr) {
	g.blockStmts(b)
	g.scalar(b.Value)
}

// blockComposite evaluates a block expression into scratch at dst, which
// its value fills, and returns where; a block without a value only runs.
func (g *gen) blockComposite(b *ast.BlockExpr, dst int) int {
	g.blockStmts(b)
	if b.Value == nil || g.typ(b.Value).Kind == sema.Void {
		return dst
	}
	return g.composite(b.Value, dst)
}

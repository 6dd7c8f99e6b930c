package parser

import (
	"testing"

	"gtrace/lang/ast"
)

// TestIfExpr parses `if` where a value goes: a ternary of block
// expressions, nested by `else if` and by an if ending a block.
func TestIfExpr(t *testing.T) {
	tests := []struct {
		src   string
		depth int // ternaries nested in the else branch or the then block
	}{
		{`BEGIN { $x = if ($a) { 1 } else { 2 }; }`, 1},
		{`BEGIN { $x = if $a { 1 } else { 2 }; }`, 1},
		{`BEGIN { $x = if ($a) { 1 } else if ($b) { 2 } else { 3 }; }`, 2},
		{`BEGIN { print(if ($a) { if ($b) { 1 } else { 2 } } else { 3 }); }`, 2},
	}
	for _, tt := range tests {
		x := firstValue(t, tt.src)
		if c, ok := x.(*ast.Call); ok {
			x = c.Args[0]
		}
		depth := 0
		for x != nil {
			e, ok := x.(*ast.Ternary)
			if !ok {
				break
			}
			depth++
			x = nil
			if next, ok := e.Else.(*ast.Ternary); ok {
				x = next
			} else if b, ok := e.Then.(*ast.BlockExpr); ok {
				x = b.Value
			}
		}
		if depth != tt.depth {
			t.Errorf("%s: %d nested ternaries, want %d", tt.src, depth, tt.depth)
		}
	}
}

// TestIfStmtInBlockExpr keeps an if whose branches have no value a
// statement, even at the end of a block expression.
func TestIfStmtInBlockExpr(t *testing.T) {
	x := firstValue(t, `BEGIN { $x = { if ($a) { @b = 1 } else { @c = 1 } }; }`)
	b := x.(*ast.BlockExpr)
	if b.Value != nil || len(b.Stmts) != 1 {
		t.Fatalf("block value %v, %d statements; want none and 1", b.Value, len(b.Stmts))
	}
	if _, ok := b.Stmts[0].(*ast.IfStmt); !ok {
		t.Errorf("statement is %T, want *ast.IfStmt", b.Stmts[0])
	}
}

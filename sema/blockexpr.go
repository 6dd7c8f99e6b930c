package sema

import (
	"fmt"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
)

// blockExpr checks a block expression: its statements, in a scope of
// their own, then its value, whose type is the block's. A block without
// a value has none.
func (c *checker) blockExpr(b *ast.BlockExpr) *Type {
	if b.Macro != "" {
		c.expansions = append(c.expansions, b.Sp)
		defer func() { c.expansions = c.expansions[:len(c.expansions)-1] }()
	}
	c.scopes = append(c.scopes, map[string]*Variable{})
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	warned := false
	for i, s := range b.Stmts {
		c.stmt(s)
		if warned || c.quiet || !terminates(s) {
			continue
		}
		if i+1 < len(b.Stmts) {
			c.errs.Warn(b.Stmts[i+1].Span(), "Unreachable statement.")
			warned = true
		} else if b.Value != nil {
			c.errs.Warn(b.Value.Span(), "Unreachable statement.")
			warned = true
		}
	}
	if b.Value == nil {
		return VoidT
	}
	return c.expr(b.Value)
}

// assignsNothing reports, at the assignment or declaration s, a value of
// type t that is none: a block ending in a statement, or a call such as
// print().
func (c *checker) assignsNothing(s ast.Node, t *Type) bool {
	if t.Kind != Void {
		return false
	}
	c.errorf(s, "Invalid expression for assignment")
	return true
}

// noteExpansions adds to the last diagnostic the calls of the macros it
// is in, innermost first, as bpftrace's "expanded from".
func (c *checker) noteExpansions() {
	e := c.errs[len(c.errs)-1]
	for i := len(c.expansions) - 1; i >= 0; i-- {
		e.Notes = append(e.Notes, &diag.Error{Span: c.expansions[i], Msg: "expanded from"})
	}
}

// diagKey identifies a diagnostic with its notes, so that one found
// twice, as in a probe with two attach points, is reported once.
func diagKey(e *diag.Error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %q %v %p", e.Span, e.Msg, e.Warning, e.File)
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "; %v %q %p", n.Span, n.Msg, n.File)
	}
	return b.String()
}

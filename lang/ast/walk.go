package ast

// Inspect walks the tree rooted at node in depth-first order, calling f for
// each node before its children. If f returns false, Inspect skips the
// node's children. Nil children are not visited.
func Inspect(node Node, f func(Node) bool) {
	if isNil(node) || !f(node) {
		return
	}
	for _, c := range children(node) {
		Inspect(c, f)
	}
}

// isNil reports whether n is nil or a typed nil pointer.
func isNil(n Node) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *Block:
		return n == nil
	case *IfStmt:
		return n == nil
	case *TypeExpr:
		return n == nil
	case *Var:
		return n == nil
	case *Map:
		return n == nil
	case *BlockExpr:
		return n == nil
	}
	return false
}

// children lists the direct children of n in source order.
func children(n Node) []Node {
	var out []Node
	add := func(ns ...Node) {
		for _, c := range ns {
			if !isNil(c) {
				out = append(out, c)
			}
		}
	}
	exprs := func(xs []Expr) {
		for _, x := range xs {
			add(x)
		}
	}
	switch n := n.(type) {
	case *Program:
		for _, d := range n.Preamble {
			add(d)
		}
		for _, c := range n.Config {
			add(c)
		}
		for _, p := range n.Probes {
			add(p)
		}
		for _, m := range n.Macros {
			add(m)
		}
		for _, d := range n.MapDecls {
			add(d)
		}
	case *ConfigEntry:
		add(n.Value)
	case *Probe:
		for _, a := range n.Attach {
			add(a)
		}
		add(n.Pred, n.Body)
	case *Block:
		for _, s := range n.Stmts {
			add(s)
		}
	case *ExprStmt:
		add(n.X)
	case *JumpStmt:
		add(n.Value)
	case *AssignStmt:
		add(n.LHS, n.RHS)
	case *LetStmt:
		add(n.Var, n.Type, n.Value)
	case *IfStmt:
		add(n.Cond, n.Then, n.Else)
	case *WhileStmt:
		add(n.Cond, n.Body)
	case *UnrollStmt:
		add(n.Count, n.Body)
	case *ForStmt:
		add(n.Var, n.Map, n.Start, n.End, n.Body)
	case *Map:
		exprs(n.Keys)
	case *Call:
		exprs(n.Args)
	case *Binary:
		add(n.X, n.Y)
	case *Unary:
		add(n.X)
	case *IncDec:
		add(n.X)
	case *Ternary:
		add(n.Cond, n.Then, n.Else)
	case *Field:
		add(n.X)
	case *Index:
		add(n.X, n.I)
	case *Tuple:
		exprs(n.Elems)
	case *Cast:
		add(n.Type, n.X)
	case *Sizeof:
		add(n.Type, n.X)
	case *Offsetof:
		add(n.Type, n.X)
	case *TypeExpr:
		add(n.Of, n.OfType)
	case *BlockExpr:
		for _, s := range n.Stmts {
			add(s)
		}
		add(n.Value)
	case *Macro:
		exprs(n.Params)
		add(n.Body)
	}
	return out
}

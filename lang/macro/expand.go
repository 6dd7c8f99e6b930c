package macro

import (
	"slices"
	"strconv"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// maxNodes bounds the nodes that expansions make: a macro that uses its
// argument twice, called on itself a few dozen times over, would
// otherwise make more than memory holds.
const maxNodes = 100000

// Expand replaces every call of a macro in prog's probes by the macro's
// expansion and drops the definitions. The list holds what went wrong.
func Expand(prog *ast.Program) diag.List {
	if len(prog.Macros) == 0 {
		return nil
	}
	x := &expander{}
	x.macros = newRegistry(prog.Macros, &x.errs)
	top := x.editor(nil)
	for _, p := range prog.Probes {
		if p.Pred != nil {
			p.Pred = x.copy(p.Pred, top).(ast.Expr)
		}
		p.Body = x.copy(p.Body, top).(*ast.Block)
	}
	prog.Macros = nil
	x.errs.Sort()
	return x.errs
}

type expander struct {
	macros registry
	errs   diag.List
	// nodes counts the nodes copied; tooBig is set once they passed
	// maxNodes, which is reported once.
	nodes  int
	tooBig bool
}

// site is what names in a macro's body stand for in one expansion.
type site struct {
	// chain lists the macros being expanded, outermost first, ending
	// with this one.
	chain []*ast.Macro
	// vars maps the body's variables to the caller's (parameters) or to
	// their new names (the body's own), maps its map parameters to the
	// caller's maps, and exprs its name parameters to the arguments.
	vars  map[string]string
	maps  map[string]string
	exprs map[string]ast.Expr
}

// editor returns the edit that expands the macro calls in a tree and,
// in a macro's body (s is nil outside any), renames its variables and
// maps and puts the arguments in place of its name parameters.
func (x *expander) editor(s *site) editFunc {
	return func(n ast.Node) (ast.Node, bool) {
		switch n := n.(type) {
		case *ast.Call:
			return x.call(n, n.Name, n.Args, s), true
		case *ast.Ident:
			return x.ident(n, s)
		case *ast.Var:
			if s != nil {
				return x.variable(n, s), true
			}
		case *ast.Map:
			if s != nil {
				return x.mapRef(n, s), true
			}
		case *ast.TypeExpr:
			if s != nil {
				return x.typeParam(n, s)
			}
		case *ast.LetStmt:
			if s != nil && s.isParam(n.Var.Name) {
				x.errs.Add(n.Span(), "Variable declaration shadows macro arg %s", n.Var.Name)
			}
		}
		return nil, false
	}
}

// isParam reports whether the variable name is a parameter of the macro.
func (s *site) isParam(name string) bool {
	for _, p := range s.chain[len(s.chain)-1].Params {
		if v, ok := p.(*ast.Var); ok && v.Name == name {
			return true
		}
	}
	return false
}

func (x *expander) variable(v *ast.Var, s *site) ast.Node {
	c := *v
	name, ok := s.vars[v.Name]
	if !ok {
		x.errs.Add(v.Span(), "Unhygienic access to variable: %s. Variables must be passed into the macro as arguments.", v.Name)
		return &c
	}
	c.Name = name
	return &c
}

func (x *expander) mapRef(m *ast.Map, s *site) ast.Node {
	c := *m
	c.Keys = x.exprs(m.Keys, x.editor(s))
	name, ok := s.maps[m.Name]
	if !ok {
		x.errs.Add(m.Span(), "Unhygienic access to map: %s. Maps must be passed into the macro as arguments.", m.Name)
		return &c
	}
	c.Name = name
	return &c
}

// typeParam puts a typeof(...) argument in place of a name parameter
// used as a type, as in (t *)x or sizeof(t), keeping the use's pointer
// levels and array length.
func (x *expander) typeParam(te *ast.TypeExpr, s *site) (ast.Node, bool) {
	arg, ok := s.exprs[te.Name].(*ast.TypeExpr)
	if !ok || x.tooBig {
		return nil, false
	}
	c := x.copy(arg, nil).(*ast.TypeExpr)
	c.Ptr += te.Ptr
	if te.Len > 0 || te.Unsized {
		c.Len, c.Unsized = te.Len, te.Unsized
	}
	return c, true
}

// ident puts the argument in place of a name parameter, or expands a
// macro named without parentheses.
func (x *expander) ident(id *ast.Ident, s *site) (ast.Node, bool) {
	if s != nil {
		if arg, ok := s.exprs[id.Name]; ok && !x.tooBig {
			// The argument is already expanded, in the caller's names.
			return x.copy(arg, nil), true
		}
	}
	if x.macros[id.Name] == nil {
		return nil, false
	}
	return x.call(id, id.Name, nil, s), true
}

func (x *expander) exprs(list []ast.Expr, edit editFunc) []ast.Expr {
	if list == nil {
		return nil
	}
	out := make([]ast.Expr, len(list))
	for i, e := range list {
		out[i] = x.copy(e, edit).(ast.Expr)
	}
	return out
}

// call expands the call of name with args at n, a *Call or, for a macro
// called without parentheses, an *Ident. What is no macro's call is
// copied with its arguments expanded.
func (x *expander) call(n ast.Expr, name string, args []ast.Expr, s *site) ast.Expr {
	args = x.exprs(args, x.editor(s))
	keep := func() ast.Expr {
		if c, ok := n.(*ast.Call); ok {
			cc := *c
			cc.Args = args
			return &cc
		}
		return x.copy(n, nil).(ast.Expr)
	}
	if x.macros[name] == nil {
		return keep()
	}
	m, closest := x.macros.lookup(name, args)
	if m == nil {
		// bpftrace's standard library defines its builtins as macros,
		// which a call that no macro of the script matches gets.
		if builtin.Lookup(name) == builtin.None && !builtin.IsFunc(name) {
			x.mismatch(n, name, args, closest[0])
		}
		return keep()
	}
	var chain []*ast.Macro
	if s != nil {
		chain = s.chain
	}
	if i := slices.Index(chain, m); i >= 0 {
		msg := "Recursive macro call detected. Call chain: "
		for _, c := range chain[i:] {
			msg += c.Name + " > "
		}
		x.errs.Add(n.Span(), "%s%s", msg, m.Name)
		return keep()
	}
	if x.nodes > maxNodes {
		if !x.tooBig {
			x.errs.Add(n.Span(), "macro expansion too large: more than %d nodes", maxNodes)
			x.tooBig = true
		}
		return keep()
	}
	return x.expand(m, n.Span(), args, append(slices.Clip(chain), m))
}

// expand makes the block that a call of m at span with args becomes;
// chain ends with m.
func (x *expander) expand(m *ast.Macro, span token.Span, args []ast.Expr, chain []*ast.Macro) ast.Expr {
	s := &site{chain: chain, vars: map[string]string{}, maps: map[string]string{}, exprs: map[string]ast.Expr{}}
	for i, p := range m.Params {
		switch p := p.(type) {
		case *ast.Var:
			s.vars[p.Name] = args[i].(*ast.Var).Name
		case *ast.Map:
			s.maps[p.Name] = args[i].(*ast.Map).Name
		case *ast.Ident:
			s.exprs[p.Name] = readOnly(args[i])
		}
	}
	prefix := "$$" + m.Name + "_"
	if len(chain) > 1 {
		prefix += strconv.Itoa(len(chain)) + "_"
	}
	for _, v := range written(m.Body) {
		if _, param := s.vars[v]; !param {
			s.vars[v] = prefix + v
		}
	}
	body := x.copy(m.Body, x.editor(s)).(*ast.BlockExpr)
	if lit, ok := body.Value.(*ast.StrLit); ok && len(body.Stmts) == 0 {
		// A string macro is a literal, which printf() and the other
		// functions that take only literals take too.
		lit.At = ast.At{Sp: span}
		return lit
	}
	body.At = ast.At{Sp: span}
	body.Macro = m.Name
	return body
}

// readOnly wraps a variable or map passed for a name parameter in a
// block, as bpftrace does, so that the body cannot assign it.
func readOnly(arg ast.Expr) ast.Expr {
	switch a := arg.(type) {
	case *ast.Var, *ast.Map:
		return &ast.BlockExpr{At: ast.At{Sp: a.Span()}, Value: a}
	}
	return arg
}

// written lists the variables that b assigns, declares, increments or
// loops over, in order, each once.
func written(b *ast.BlockExpr) []string {
	var names []string
	add := func(x ast.Expr) {
		if v, ok := x.(*ast.Var); ok && !slices.Contains(names, v.Name) {
			names = append(names, v.Name)
		}
	}
	ast.Inspect(b, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			add(n.LHS)
		case *ast.LetStmt:
			add(n.Var)
		case *ast.ForStmt:
			add(n.Var)
		case *ast.IncDec:
			add(n.X)
		}
		return true
	})
	return names
}

// mismatch reports a call that matches no macro called name, with how
// the closest, m, differs.
func (x *expander) mismatch(n ast.Expr, name string, args []ast.Expr, m *ast.Macro) {
	x.errs.Add(n.Span(), "Call to %s() has arguments that do not match any definition.", name)
	if len(m.Params) != len(args) {
		addNote(x.errs, m.Head, "The closest definition of "+name+"() has a different number of arguments. Expected: "+
			strconv.Itoa(len(m.Params))+" but got "+strconv.Itoa(len(args)))
		return
	}
	for i, p := range m.Params {
		if fits(p, args[i]) {
			continue
		}
		pname, kind := param(p)
		x.errs.Add(args[i].Span(), "Mismatched arg. %s() expects a %s for arg %s but got %s.", name, kind, pname, argKind(args[i]))
		addNote(x.errs, p.Span(), "This is the argument in the closest definition.")
	}
}

// argKind names what an argument is in a mismatch.
func argKind(arg ast.Expr) string {
	switch a := arg.(type) {
	case *ast.Var:
		return "a variable"
	case *ast.Map:
		if len(a.Keys) == 0 {
			return "a map"
		}
	}
	return "an expression"
}

package macro

import (
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// registry holds the macros by name, in the order of definition.
type registry map[string][]*ast.Macro

// newRegistry registers macros, reporting those defined twice and those
// that name a parameter twice, which it leaves out.
func newRegistry(macros []*ast.Macro, errs *diag.List) registry {
	r := registry{}
	for _, m := range macros {
		if old, _ := r.lookup(m.Name, m.Params); old != nil {
			errs.Add(m.Head, "Redefinition of macro: %s", m.Name)
			addNote(*errs, old.Head, "This is the original definition.")
			continue
		}
		if !validParams(m, errs) {
			continue
		}
		// bpftrace lets a macro take a function's or a builtin's name,
		// and every call of it then means the macro: count() would count
		// nothing, pid would be the macro's value.
		switch {
		case builtin.IsFunc(m.Name):
			errs.Warn(m.Head, "macro %s hides the function %s(): its calls with %d arguments expand the macro", m.Name, m.Name, len(m.Params))
		case builtin.Lookup(m.Name) != builtin.None && len(m.Params) == 0:
			// A macro without parameters is called without parentheses too.
			errs.Warn(m.Head, "macro %s hides the builtin %s: the program's %s expands the macro", m.Name, m.Name, m.Name)
		}
		r[m.Name] = append(r[m.Name], m)
	}
	return r
}

// validParams reports a parameter named twice.
func validParams(m *ast.Macro, errs *diag.List) bool {
	seen := map[string]bool{}
	for _, p := range m.Params {
		name, kind := param(p)
		if seen[name] {
			errs.Add(p.Span(), "%s for macro argument has already been used: %s", strings.ToUpper(kind[:1])+kind[1:], name)
			return false
		}
		seen[name] = true
	}
	return true
}

// param returns a parameter's name and kind as bpftrace's messages say
// it: variable, map or ident.
func param(p ast.Expr) (name, kind string) {
	switch p := p.(type) {
	case *ast.Var:
		return p.Name, "variable"
	case *ast.Map:
		return p.Name, "map"
	}
	return p.(*ast.Ident).Name, "ident"
}

// lookup returns the first macro called name that args match exactly,
// or else the macros that they come closest to.
func (r registry) lookup(name string, args []ast.Expr) (*ast.Macro, []*ast.Macro) {
	best := -1
	var closest []*ast.Macro
	for _, m := range r[name] {
		d := distance(m, args)
		if d == 0 {
			return m, nil
		}
		if best < 0 || d < best {
			best, closest = d, nil
		}
		if d == best {
			closest = append(closest, m)
		}
	}
	return nil, closest
}

// distance counts how far args are from m's parameters: a missing or
// extra argument outweighs any number of arguments of the wrong kind.
func distance(m *ast.Macro, args []ast.Expr) int {
	d := 1024 * abs(len(m.Params)-len(args))
	for i := 0; i < len(m.Params) && i < len(args); i++ {
		if !fits(m.Params[i], args[i]) {
			d++
		}
	}
	return d
}

// fits reports whether arg can be passed for p: a whole map for a map,
// a variable for a variable, anything for a name.
func fits(p, arg ast.Expr) bool {
	switch p.(type) {
	case *ast.Map:
		m, ok := arg.(*ast.Map)
		return ok && len(m.Keys) == 0
	case *ast.Var:
		_, ok := arg.(*ast.Var)
		return ok
	}
	return true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// addNote adds a note at span to the last diagnostic of errs.
func addNote(errs diag.List, span token.Span, msg string) {
	e := errs[len(errs)-1]
	e.Notes = append(e.Notes, &diag.Error{Span: span, Msg: msg})
}

package sema

import "gtrace/lang/ast"

// forStmt checks `for ($kv : @map)` and `for ($i : start..end)`. The loop
// variable is declared afresh in the body's scope on every iteration.
func (c *checker) forStmt(s *ast.ForStmt) {
	var vt *Type
	if s.Map != nil {
		vt = c.forMapType(s.Map)
	} else {
		c.wantInt(s.Start, c.expr(s.Start))
		c.wantInt(s.End, c.expr(s.End))
		vt = Int64
	}
	if vt == nil {
		vt = &Type{Kind: Invalid}
	}
	c.scopes = append(c.scopes, map[string]*Variable{})
	c.declare(s.Var, vt)
	c.prog.Types[s.Var] = vt
	c.loops++
	c.block(s.Body)
	c.loops--
	c.scopes = c.scopes[:len(c.scopes)-1]
}

// forMapType is the type of the variable of a for loop over m: the tuple
// (key, value), where a map of several keys has a tuple as its key.
func (c *checker) forMapType(m *ast.Map) *Type {
	mi := c.wholeMap(m)
	c.prog.Types[m] = VoidT
	if mi.Value == nil {
		return nil // reported as an undefined map unless assigned elsewhere
	}
	if mi.Key == nil {
		c.errorf(m, "%s has no keys: a for loop needs a map with keys", m.Name)
		return nil
	}
	v := loopValue(mi.Value)
	if v == nil {
		c.errorf(m, "A for loop can not iterate over %s: maps of %s() are not supported", m.Name, mi.Value.Agg)
		return nil
	}
	return TupleType([]*Type{mi.Key, v})
}

// loopValue is the value a for loop sees for a map value of type t: the
// value itself, or an aggregation's total over all CPUs; nil when a loop
// can not read it.
func loopValue(t *Type) *Type {
	switch t.Kind {
	case Int:
		return IntType(8, t.Signed) // tuple elements are 8-byte slots
	case Agg:
	default:
		return t
	}
	switch t.Agg {
	case AggCount:
		return Uint64
	case AggSum, AggMin, AggMax:
		return Int64
	}
	return nil
}

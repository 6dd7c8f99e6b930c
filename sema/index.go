package sema

import (
	"strconv"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// index checks x[i]: an element through a pointer, a char of a string,
// an element of an array, or a tuple's element by a constant index.
func (c *checker) index(e *ast.Index) *Type {
	t := c.expr(e.X)
	c.wantInt(e.I, c.expr(e.I))
	i, isConst := c.constIndex(e.I)
	if isConst {
		c.prog.Consts[e.I] = i
	}
	switch t.Kind {
	case Pointer:
		return c.deref(e, t)
	case Tuple:
		if !isConst {
			c.errorf(e.I, "The index of a tuple must be a constant")
			return nil
		}
		// $t[i] is $t.i, which code generation generates in its place.
		f := &ast.Field{At: e.At, X: e.X, Name: strconv.FormatInt(i, 10)}
		c.prog.Stands[e] = f
		return c.expr(f)
	case String:
		if isConst && (i < 0 || i >= int64(t.Size)) {
			c.errorf(e, "the index %d is out of bounds for array of size %d", i, t.Size)
			return nil
		}
		return IntType(1, true)
	case Array:
		// A flexible array member (Len 0) is indexed unchecked, as in C.
		if isConst && t.Len > 0 && (i < 0 || i >= int64(t.Len)) {
			c.errorf(e, "the index %d is out of bounds for array of size %d", i, t.Len)
			return nil
		}
		if !isConst && !t.Elems[0].IsScalar() && !c.inMemory(e.X) {
			c.errorf(e.I, "The index of an array of %s must be a constant", t.Elems[0])
			return nil
		}
		return t.Elems[0]
	case Invalid:
		return nil
	}
	c.errorf(e, "The [] operator can not be used on a value of type '%s'", t)
	return nil
}

// inMemory reports whether e is read from kernel or user memory through
// a pointer, where an element at an index known only at run time is
// found by its address.
func (c *checker) inMemory(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Field:
		if _, ok := c.prog.Members[e]; !ok {
			return false
		}
		return c.prog.Types[e.X].Kind == Pointer || c.inMemory(e.X)
	case *ast.Index:
		xt := c.prog.Types[e.X]
		return xt.Kind == Pointer || xt.Kind == Array && c.inMemory(e.X)
	case *ast.Unary:
		return e.Op == token.MUL
	}
	return false
}

// constIndex evaluates an index known at compile time, such as 1 + 1.
func (c *checker) constIndex(e ast.Expr) (int64, bool) {
	b, ok := e.(*ast.Binary)
	if !ok {
		return c.constInt(e)
	}
	x, okx := c.constIndex(b.X)
	y, oky := c.constIndex(b.Y)
	if !okx || !oky {
		return 0, false
	}
	switch b.Op {
	case token.ADD:
		return x + y, true
	case token.SUB:
		return x - y, true
	case token.MUL:
		return x * y, true
	}
	return 0, false
}

// recordArray resolves an array of structs or unions, such as the type of
// `let $w: struct W[10]`.
func (c *checker) recordArray(te *ast.TypeExpr) *Type {
	bt, err := c.lookupType(te.Name)
	if err != nil {
		c.errorf(te, "%v", err)
		return &Type{Kind: Invalid}
	}
	rec := fromBTF(bt)
	if rec == nil || rec.Kind != Record {
		c.errorf(te, "Arrays of %s are not supported", te.Name)
		return &Type{Kind: Invalid}
	}
	if c.arrayTooLarge(te, rec) {
		return &Type{Kind: Invalid}
	}
	return ArrayType(rec, te.Len)
}

package sema

import (
	"strings"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
)

// isCompositeName reports whether a type name is a struct, union or enum.
func isCompositeName(name string) bool {
	kind, _, _ := strings.Cut(name, " ")
	return kind == "struct" || kind == "union" || kind == "enum"
}

// sizeof checks sizeof(type) or sizeof(expr) and records its value.
func (c *checker) sizeof(e *ast.Sizeof) *Type {
	x, te := e.X, e.Type
	switch t := x.(type) {
	case *ast.TypeExpr: // sizeof(t), t a macro's type argument
		x, te = nil, t
	case *ast.Index: // sizeof(t[N])
		if elem, ok := t.X.(*ast.TypeExpr); ok {
			n, _ := c.constInt(t.I)
			arr := *elem
			arr.Len = int(n)
			x, te = nil, &arr
		}
	}
	// sizeof(pid_t); sizeofExpr knows the fixed-width typedefs itself.
	if named := c.nameType(x); named != nil && intTypedefs[named.Name] == 0 {
		x, te = nil, named
	}
	switch {
	case x != nil:
		c.prog.Consts[e] = c.sizeofExpr(x)
	case te.Ptr == 0 && te.Len == 0 && isCompositeName(te.Name):
		t, err := c.lookupType(te.Name)
		if err != nil {
			c.errorf(te, "%v", err)
			return nil
		}
		size, err := btf.Sizeof(t)
		if err != nil {
			c.errorf(te, "sizeof(%s): %v", te.Name, err)
			return nil
		}
		c.prog.Consts[e] = int64(size)
	default:
		c.prog.Consts[e] = sizeofType(c.sizedType(te))
	}
	return Uint64
}

// offsetof checks offsetof(struct T, a.b) and records the byte offset of
// the field, through nested and anonymous members.
func (c *checker) offsetof(e *ast.Offsetof) *Type {
	t, name, ok := c.offsetofBase(e)
	if !ok {
		return nil
	}
	var bits btf.Bits
	for _, f := range e.Field {
		m, off, ok := member(t, f)
		if !ok {
			c.errorf(e, "%s has no field named %s", name, f)
			return nil
		}
		if m.BitfieldSize > 0 {
			c.errorf(e, "offsetof(): %s.%s is a bit field", name, f)
			return nil
		}
		bits += off
		t = btf.UnderlyingType(m.Type)
		name += "." + f
	}
	c.prog.Consts[e] = int64(bits / 8)
	return Uint64
}

// member finds the field name of a struct or union, looking inside
// anonymous members, and its bit offset from the start of t.
func member(t btf.Type, name string) (btf.Member, btf.Bits, bool) {
	for _, m := range members(t) {
		if m.Name == name {
			return m, m.Offset, true
		}
		if m.Name == "" {
			if inner, off, ok := member(m.Type, name); ok {
				return inner, m.Offset + off, true
			}
		}
	}
	return btf.Member{}, 0, false
}

// members lists the members of a struct or union; nil for other types.
func members(t btf.Type) []btf.Member {
	switch t := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		return t.Members
	case *btf.Union:
		return t.Members
	}
	return nil
}

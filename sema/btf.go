package sema

import (
	"github.com/cilium/ebpf/btf"

	"gtrace/kernel"
	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// Kernel memory is typed from BTF: a struct or union is a Record, a
// pointer a Pointer whose target stays a BTF type until it is followed,
// so that self-referencing structs need no up-front conversion.

// fromBTF converts a BTF type to the type of a value read from kernel
// memory. char arrays are strings, other arrays of known element types
// arrays. It returns nil for what a script can not hold (functions,
// void, flexible arrays).
func fromBTF(t btf.Type) *Type {
	switch t := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		if t.Encoding&btf.Bool != 0 {
			return &Type{Kind: Bool, Size: int(t.Size)}
		}
		return IntType(int(t.Size), t.Encoding&btf.Signed != 0)
	case *btf.Enum:
		// A kernel enum's values print by name.
		return &Type{Kind: Int, Size: int(t.Size), Signed: t.Signed, Enum: t}
	case *btf.Pointer:
		return &Type{Kind: Pointer, Size: 8, BTF: t.Target}
	case *btf.Struct, *btf.Union:
		size, err := btf.Sizeof(t)
		if err != nil || size == 0 {
			return nil
		}
		return &Type{Kind: Record, Size: size, BTF: t}
	case *btf.Array:
		if t.Nelems == 0 {
			return nil
		}
		if isChar(t.Type) {
			return StringType(int(t.Nelems))
		}
		elem := fromBTF(t.Type)
		if elem == nil {
			return nil
		}
		return ArrayType(elem, int(t.Nelems))
	}
	return nil
}

// isChar reports whether t is plain char, the element type of strings.
func isChar(t btf.Type) bool {
	i, ok := btf.UnderlyingType(t).(*btf.Int)
	return ok && i.Size == 1 && i.Name == "char"
}

// pointee is the size of what a pointer of type t points to, the unit of
// its arithmetic: 1 for void and anything unsized, as in GNU C.
func pointee(t *Type) int {
	if t.BTF == nil {
		return 1
	}
	n, err := btf.Sizeof(t.BTF)
	if err != nil || n == 0 {
		return 1
	}
	return n
}

// toBTF describes a script type as BTF, for the target of a cast to a
// pointer such as (uint32 *).
func toBTF(t *Type) btf.Type {
	switch t.Kind {
	case Int:
		enc := btf.Unsigned
		if t.Signed {
			enc = btf.Signed
		}
		return &btf.Int{Name: t.String(), Size: uint32(t.Size), Encoding: enc}
	case Bool:
		return &btf.Int{Name: "bool", Size: 1, Encoding: btf.Bool}
	case Pointer:
		return &btf.Pointer{Target: t.BTF}
	case Record:
		return t.BTF
	}
	return &btf.Void{}
}

// cName is how C names a type: "struct task_struct", "int", "void".
func cName(t btf.Type) string {
	if t == nil {
		return "void"
	}
	return kernel.CDecl(t, "")
}

// Member is a field of a Record, as a field access found it.
type Member struct {
	Offset int // bytes from the start of the record
	// BitOffset and BitSize locate a bit field within the bytes at
	// Offset; BitSize is 0 for an ordinary field.
	BitOffset, BitSize int
}

// recordField finds field name in the struct or union t, looking inside
// anonymous members, and returns its type and place.
func recordField(t btf.Type, name string) (*Type, Member, bool) {
	m, bits, ok := member(t, name)
	if !ok {
		return nil, Member{}, false
	}
	ft := fromBTF(m.Type)
	if ft == nil {
		return nil, Member{}, false
	}
	if m.BitfieldSize > 0 {
		return ft, Member{Offset: int(bits / 8), BitOffset: int(bits % 8), BitSize: int(m.BitfieldSize)}, true
	}
	return ft, Member{Offset: int(bits / 8)}, true
}

// pointerType resolves a pointer type as written in a cast, such as
// (struct request *) or (uint8 **).
func (c *checker) pointerType(te *ast.TypeExpr) *Type {
	var target btf.Type
	switch {
	case te.Name == "void":
		target = &btf.Void{}
	case isCompositeName(te.Name):
		t, err := c.lookupType(te.Name)
		if err != nil {
			c.errorf(te, "%v", err)
			return &Type{Kind: Invalid}
		}
		target = t
	default:
		base := c.typeExpr(&ast.TypeExpr{At: te.At, Name: te.Name, Len: te.Len, Of: te.Of, OfType: te.OfType})
		if base.Kind == Invalid {
			return base
		}
		target = toBTF(base)
	}
	for i := 1; i < te.Ptr; i++ {
		target = &btf.Pointer{Target: target}
	}
	ptr := &Type{Kind: Pointer, Size: 8, BTF: target}
	if isCompositeName(te.Name) {
		return c.arrayOf(te, ptr) // struct Foo *[2]: pointers to struct Foo
	}
	return ptr
}

// recordField checks x->f or x.f on a pointer to a struct or union, or on
// a struct or union itself.
func (c *checker) recordField(e *ast.Field, t *Type) *Type {
	rec := t.BTF
	switch btf.UnderlyingType(rec).(type) {
	case *btf.Struct, *btf.Union:
	default:
		c.errorf(e, "Can not access field '%s' on type '%s'", e.Name, t)
		return nil
	}
	ft, m, ok := recordField(rec, e.Name)
	if !ok {
		if _, _, found := member(rec, e.Name); found {
			c.errorf(e, "Field '%s' of %s has a type that can not be read", e.Name, cName(rec))
		} else {
			c.errorf(e, "Struct/union of type '%s' does not contain a field named '%s'", cName(rec), e.Name)
		}
		return nil
	}
	c.prog.Members[e] = m
	return ft
}

// deref checks *p and p[i]: the value a pointer points to.
func (c *checker) deref(e ast.Expr, t *Type) *Type {
	vt := fromBTF(t.BTF)
	if vt == nil {
		c.errorf(e, "Can not dereference a pointer to %s", cName(t.BTF))
		return nil
	}
	return vt
}

// unaryMemory checks *x and &x.
func (c *checker) unaryMemory(e *ast.Unary, t *Type) *Type {
	if u, ok := e.X.(*ast.Unary); ok && e.Op == token.MUL && u.Op == token.AND {
		if v, ok := u.X.(*ast.Var); ok {
			// *&$x is $x, whatever its type.
			c.prog.Stands[e] = v
			return c.prog.Types[v]
		}
	}
	switch {
	case t.Kind == Invalid:
		return nil
	case e.Op == token.MUL && t.Kind == Pointer:
		return c.deref(e, t)
	case e.Op == token.MUL && isInt(t):
		// An integer used as an address reads 8 bytes, as bpftrace does.
		return Uint64
	case e.Op == token.AND && addressable(e.X):
		return &Type{Kind: Pointer, Size: 8, BTF: toBTF(t)}
	}
	c.errorf(e, "The %s operator can not be applied to a value of type '%s'", e.Op, t)
	return nil
}

// addressable reports whether e names memory: a field of a kernel
// struct, an element through a pointer, a dereference or a variable.
func addressable(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Field:
		return !isArgs(e.X)
	case *ast.Index, *ast.Unary, *ast.Var:
		return true
	}
	return false
}

func isArgs(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "args"
}

// PointeeSize is the unit of a pointer's arithmetic.
func PointeeSize(t *Type) int { return pointee(t) }

// RecordField is one readable field of a struct or union value.
type RecordField struct {
	Name string
	Type *Type
	Member
}

// Fields lists the fields of a Record that a script can read, with
// anonymous members' fields in their place, as bpftrace prints them.
func Fields(t *Type) []RecordField {
	var out []RecordField
	var walk func(bt btf.Type, base btf.Bits)
	walk = func(bt btf.Type, base btf.Bits) {
		for _, m := range members(bt) {
			bits := base + m.Offset
			if m.Name == "" {
				walk(m.Type, bits)
				continue
			}
			ft := fromBTF(m.Type)
			if ft == nil {
				continue
			}
			f := RecordField{Name: m.Name, Type: ft, Member: Member{Offset: int(bits / 8)}}
			if m.BitfieldSize > 0 {
				f.BitOffset, f.BitSize = int(bits%8), int(m.BitfieldSize)
			}
			out = append(out, f)
		}
	}
	walk(t.BTF, 0)
	return out
}

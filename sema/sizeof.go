package sema

import (
	"gtrace/lang/ast"
	"gtrace/lang/builtin"
)

// intTypedefs are the sizes of the kernel's and C's fixed-width integer
// typedefs, which sizeof() takes as it takes int8 to uint64: they have
// the same size on every kernel.
var intTypedefs = map[string]int64{
	"u8": 1, "u16": 2, "u32": 4, "u64": 8,
	"s8": 1, "s16": 2, "s32": 4, "s64": 8,
	"__u8": 1, "__u16": 2, "__u32": 4, "__u64": 8,
	"__s8": 1, "__s16": 2, "__s32": 4, "__s64": 8,
	"uint8_t": 1, "uint16_t": 2, "uint32_t": 4, "uint64_t": 8,
	"int8_t": 1, "int16_t": 2, "int32_t": 4, "int64_t": 8,
}

// sizeofExpr is the size of sizeof(x), or of the integer typedef that
// x names.
func (c *checker) sizeofExpr(x ast.Expr) int64 {
	if id, ok := x.(*ast.Ident); ok && lookupBuiltin(id.Name) == builtin.None {
		if n, ok := intTypedefs[id.Name]; ok {
			return n
		}
	}
	return sizeofType(c.expr(x))
}

// sizeofType is the size sizeof() gives a value of type t: a bool is one
// byte, as in bpftrace, though gtrace keeps it in a word.
func sizeofType(t *Type) int64 {
	if t.Kind == Bool {
		return 1
	}
	return int64(t.Size)
}

package sema

import (
	"math"

	"gtrace/lang/token"
)

// flexInt64 is the type of a non-negative integer literal.
var flexInt64 = &Type{Kind: Int, Size: 8, Signed: true, Flex: true}

// promoteInt returns the integer type that a map, a map key or a
// variable takes when it holds integers of types a and b, by bpftrace's
// rules: the larger of two of the same sign; for mixed signs, the sign
// of the one that is not a literal and the larger size; else the signed
// one if it is larger, or a signed type twice the larger size, int64 at
// most, so that `@m = (uint8)1; @m = (int64)-1` reads back -1. It returns
// a when a holds b already.
func promoteInt(a, b *Type) *Type {
	size := max(a.Size, b.Size)
	signed := a.Signed
	switch {
	case a.Signed == b.Signed:
	case a.Flex || b.Flex:
		signed = !a.Flex && a.Signed || !b.Flex && b.Signed
	case a.Signed && a.Size > b.Size:
	case b.Signed && b.Size > a.Size:
		signed = true
	default:
		signed, size = true, min(2*size, 8)
	}
	flex := a.Flex && b.Flex
	if size == a.Size && signed == a.Signed && flex == a.Flex {
		return a
	}
	return &Type{Kind: Int, Size: size, Signed: signed, Flex: flex}
}

// literalType is the type of a non-negative integer literal, as bpftrace
// types it: the smallest signed integer that holds it, whose sign
// follows that of the integers it is mixed with; uint64 past int64.
func literalType(v uint64) *Type {
	for _, size := range []int{1, 2, 4} {
		if v < 1<<(8*size-1) {
			return &Type{Kind: Int, Size: size, Signed: true, Flex: true}
		}
	}
	if v > math.MaxInt64 {
		return Uint64
	}
	return flexInt64
}

// negativeLiteralType is the type of -v for an integer literal v: the
// smallest signed integer that holds it.
func negativeLiteralType(v uint64) *Type {
	for _, size := range []int{1, 2, 4} {
		if v <= 1<<(8*size-1) {
			return IntType(size, true)
		}
	}
	return Int64
}

// stepped is the type of a variable or map of integer type t after ++
// or --, which computes in 64 bits as bpftrace does: unsigned only when
// t is and the step is up.
func stepped(t *Type, op token.Kind) *Type {
	if t.Kind != Int {
		return t
	}
	return widen(t, IntType(8, t.Signed || op == token.DEC))
}

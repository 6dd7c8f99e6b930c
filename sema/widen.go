package sema

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

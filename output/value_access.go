package output

// Values are read back by code that consumes events rather than prints
// them, such as the recorders of gtrace class and flow.

// Elems returns the elements of a tuple or array, nil for other values.
func (v Value) Elems() []Value {
	if v.tag == tagTuple || v.tag == tagArray {
		return v.elems
	}
	return nil
}

// Number returns the value of an integer, boolean, pointer or other
// symbol with a number, and whether v has one.
func (v Value) Number() (uint64, bool) {
	switch v.tag {
	case tagInt, tagUint, tagBool, tagSym:
		return v.n, true
	}
	return 0, false
}

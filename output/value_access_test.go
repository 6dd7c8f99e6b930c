package output

import "testing"

func TestValueAccess(t *testing.T) {
	v := Tuple(Uint(7), Int(-1), Pointer(0xff), Str("dd"))
	elems := v.Elems()
	if len(elems) != 4 {
		t.Fatalf("%d elements, want 4", len(elems))
	}
	for i, want := range []uint64{7, ^uint64(0), 0xff} {
		if n, ok := elems[i].Number(); !ok || n != want {
			t.Errorf("element %d: %d, %v; want %d", i, n, ok, want)
		}
	}
	if _, ok := elems[3].Number(); ok {
		t.Errorf("a string has a number")
	}
	if elems[3].String() != "dd" || Str("x").Elems() != nil {
		t.Errorf("string element %q, or a string has elements", elems[3].String())
	}
}

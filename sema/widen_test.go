package sema

import "testing"

// TestWidening checks the types maps, their keys and variables take when
// they hold integers of several types.
func TestWidening(t *testing.T) {
	tests := []struct {
		src, m, key, value string
	}{
		{`BEGIN { @x = (uint8)1; @x = (int64)-1; }`, "@x", "", "int64"},
		{`BEGIN { @x = (int8)1; @x = (int32)2; }`, "@x", "", "int32"},
		{`BEGIN { @x = (uint16)1; @x = (uint8)2; }`, "@x", "", "uint16"},
		{`BEGIN { @x = (uint8)1; @x = (int8)2; }`, "@x", "", "int16"},
		{`BEGIN { @x = (uint32)1; @x = (int32)2; }`, "@x", "", "int64"},
		{`BEGIN { @x = (int32)1; @x = (uint16)2; }`, "@x", "", "int32"},
		{`BEGIN { @x = (uint64)1; @x = (int64)2; }`, "@x", "", "int64"},
		{`BEGIN { @x = (int64)1; @x = (uint64)2; }`, "@x", "", "int64"},
		// A non-negative literal takes the sign of what it is mixed with.
		{`BEGIN { @x = 1; @x = (uint64)2; }`, "@x", "", "uint64"},
		{`BEGIN { @x = (uint64)1; @x = 0; }`, "@x", "", "uint64"},
		{`BEGIN { @x = (uint32)1; @x = 0; }`, "@x", "", "uint32"},
		{`BEGIN { @x = (uint64)1; @x += 1; @x++; }`, "@x", "", "uint64"},
		{`BEGIN { @x = -1; @x = (uint64)2; }`, "@x", "", "int64"},
		{`BEGIN { @x = 1; @x = 2; }`, "@x", "", "int8"},
		// Literals are the smallest signed integer that holds them; ++,
		// -- and compound assignments compute in 64 bits.
		{`BEGIN { @x = 1; @x = 200; }`, "@x", "", "int16"},
		{`BEGIN { @x = 1; @x = -70000; }`, "@x", "", "int32"},
		{`BEGIN { @x = 1; @x++; }`, "@x", "", "int64"},
		{`BEGIN { @x = (uint8)1; @x++; }`, "@x", "", "uint64"},
		{`BEGIN { $a = 1; $a += 1; @x = $a; }`, "@x", "", "int64"},
		{`BEGIN { $a = 1; $a--; @x = $a; }`, "@x", "", "int64"},
		// Keys are 8 bytes wide; their signs mix the same way.
		{`BEGIN { @x[(uint32)1] = 1; @x[(int32)2] = 1; }`, "@x", "int64", "int8"},
		{`BEGIN { @x[1] = 1; @x[(uint64)2] = 1; }`, "@x", "uint64", "int8"},
		{`BEGIN { @x[(uint8)1, "a"] = 1; @x[(int8)-1, "bc"] = 1; }`, "@x", "(int64,string[3])", "int8"},
		// Tuples widen element by element.
		{`BEGIN { @x = ((uint8)1, "a"); @x = ((int64)-1, "b"); }`, "@x", "", "(int64,string[2])"},
		{`BEGIN { $v = (uint8)1; $v = (int64)-5; @x = $v; }`, "@x", "", "int64"},
		{`BEGIN { $v = (int16)1; $v = (int8)-5; @x = $v; }`, "@x", "", "int16"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, true)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			m := info.Maps[tt.m]
			if got := typeList(m.Key); got != tt.key {
				t.Errorf("key type %s, want %s", got, tt.key)
			}
			if got := m.Value.String(); got != tt.value {
				t.Errorf("value type %s, want %s", got, tt.value)
			}
		})
	}
}

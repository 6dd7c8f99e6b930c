package token

import "testing"

func TestParseInt(t *testing.T) {
	tests := []struct {
		text string
		want uint64
		err  string
	}{
		{"0", 0, ""},
		{"1234", 1234, ""},
		{"0x10000000", 0x10000000, ""},
		{"0XfF", 255, ""},
		{"0b101", 5, ""},
		{"017", 15, ""},
		{"1_000_000", 1e6, ""},
		{"1e6", 1e6, ""},
		{"5e0", 0, "invalid trailing bytes: 5e0"},
		{"2ms", 2e6, ""},
		{"18446744073709551615", 1<<64 - 1, ""},
		{"", 0, "invalid integer: "},
		{"x", 0, "invalid integer: x"},
		{"1b", 0, "invalid trailing bytes: 1b"},
		{"12e3", 0, "coefficient part of scientific literal must be 1-9: 12e3"},
		{"1e20", 0, "overflow error, maximum value is 18446744073709551615: 1e20"},
		{"18446744073709551616", 0, "overflow error, maximum value is 18446744073709551615: 18446744073709551616"},
		{"4294967296u", 0, "overflow error, maximum value is 4294967295: 4294967296u"},
	}
	for _, tt := range tests {
		got, err := ParseInt(tt.text)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseInt(%q) = %d, %v; want error %q", tt.text, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d", tt.text, got, err, tt.want)
		}
	}
}

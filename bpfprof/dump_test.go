package bpfprof

import "testing"

func TestDisassemble(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want string
	}{
		{"push and mov", []byte{0x55, 0x48, 0x89, 0xe5}, "    0:  55                             push %rbp\n" +
			"    1:  48 89 e5                       mov %rsp,%rbp\n"},
		{"ret", []byte{0xc3}, "    0:  c3                             retq\n"},
		// push %es does not exist in 64-bit mode.
		{"bad", []byte{0x06, 0xc3}, "    0:  06                             (bad)\n" +
			"    1:  c3                             retq\n"},
		{"empty", nil, ""},
	}
	for _, tc := range tests {
		if got := disassemble(tc.code); got != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

func TestHexDump(t *testing.T) {
	code := make([]byte, 18)
	for i := range code {
		code[i] = byte(i)
	}
	want := "    0:  00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n   10:  10 11\n"
	if got := hexDump(code); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if got := hexDump(nil); got != "" {
		t.Errorf("empty code: got %q", got)
	}
}

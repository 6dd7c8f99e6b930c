package bpfprof

import (
	"fmt"
	"testing"
)

func TestDisassemble(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		addr uint64
		want string
	}{
		{"push and mov", []byte{0x55, 0x48, 0x89, 0xe5}, 0, "    0:  55                             push %rbp\n" +
			"    1:  48 89 e5                       mov %rsp,%rbp\n"},
		{"ret", []byte{0xc3}, 0, "    0:  c3                             retq\n"},
		// push %es does not exist in 64-bit mode.
		{"bad", []byte{0x06, 0xc3}, 0, "    0:  06                             (bad)\n" +
			"    1:  c3                             retq\n"},
		// A call's target is an address: the next instruction's, plus 16.
		{"call", []byte{0xe8, 0x10, 0x00, 0x00, 0x00}, 0xffffffffc0001000,
			"    0:  e8 10 00 00 00                 callq 0xffffffffc0001015\n"},
		{"empty", nil, 0, ""},
	}
	for _, tc := range tests {
		if got := disassemble(tc.code, tc.addr); got != tc.want {
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

func TestSplitFuncs(t *testing.T) {
	code := []byte{1, 2, 3, 4, 5}
	tests := []struct {
		name  string
		lens  []uint32
		addrs []uintptr
		want  []jited
	}{
		{"two functions", []uint32{3, 2}, []uintptr{0x1000, 0x2000},
			[]jited{{code[:3], 0x1000}, {code[3:], 0x2000}}},
		{"no lengths", nil, []uintptr{0x1000}, []jited{{code, 0x1000}}},
		{"lengths that do not add up", []uint32{3}, []uintptr{0x1000}, []jited{{code, 0x1000}}},
		{"addresses hidden", nil, nil, []jited{{code, 0}}},
	}
	for _, tc := range tests {
		got := splitFuncs(code, tc.lens, tc.addrs)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

package output

import (
	"strings"
	"testing"
)

func TestParseFormatErrors(t *testing.T) {
	tests := []struct {
		format, want string
	}{
		{"%f", "unsupported format specifier: f"},
		{"%d %Lf", "unsupported format specifier: f"},
		{"%e", "unsupported format specifier: e"},
		{"%g", "unsupported format specifier: g"},
		{"%n", "unsupported format specifier: n"},
		{"%A", "unsupported format specifier: A"},
		{"%99999999999d", "format width too large: %99999999999d"},
		{"%-999999999d", "format width too large: %-999999999d"},
		{"%65536s", "format width too large: %65536s"},
		{"%.65536d", "format precision too large: %.65536d"},
		{"%.99999999999999999999x", "format precision too large: %.99999999999999999999x"},
		{"%%%99999%", "format width too large: %99999%"},
	}
	for _, tt := range tests {
		_, err := ParseFormat(tt.format)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseFormat(%q) error = %v, want %q", tt.format, err, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	intArg := Arg{Class: ArgInt, Type: "int64"}
	strArg := Arg{Class: ArgOther, Type: "string[6]"}
	tests := []struct {
		format string
		args   []Arg
		want   string
	}{
		{"%d %s", []Arg{intArg, strArg}, ""},
		{"%d", []Arg{}, "not enough arguments for format string (0 supplied, 1 expected)"},
		{"%d", []Arg{intArg, intArg}, "too many arguments for format string (2 supplied, 1 expected)"},
		{"%%d %k 100%", []Arg{intArg}, "too many arguments for format string (1 supplied, 0 expected)"},
		{"%*d", []Arg{intArg}, ""},
		{"%0-5d", []Arg{intArg}, "too many arguments for format string (1 supplied, 0 expected)"},
		{"%d", []Arg{strArg}, "unsupported format specifier for type 'string[6]': d"},
		{"%s %x", []Arg{intArg, {Class: ArgNone, Type: "none"}}, "unable to print none type for specifier: x"},
		{"%p %c %gr %u", []Arg{{Class: ArgPointer}, {Class: ArgBool}, intArg, intArg}, ""},
		{"%r", []Arg{intArg}, "unsupported format specifier for type 'int64': r"},
		{"%rx %rh %s", []Arg{{Class: ArgBuffer}, {Class: ArgBuffer}, {Class: ArgBuffer}}, ""},
	}
	for _, tt := range tests {
		f, err := ParseFormat(tt.format)
		if err != nil {
			t.Fatalf("ParseFormat(%q): %v", tt.format, err)
		}
		got := ""
		if err := f.Check(tt.args); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Check(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
}

// Where bpftrace v0.26 (C++ streams) differs from C printf, the
// expectations follow v0.26; they were checked against libstdc++.
func TestSprint(t *testing.T) {
	stack := Stack(StackBpftrace, []Frame{{Addr: 1, Sym: "f"}})
	tests := []struct {
		format string
		args   []Value
		want   string
	}{
		{"%d %i", []Value{Int(-3), Uint(3000000000)}, "-3 -1294967296"},
		{"%ld %lu %lx", []Value{Uint(1<<64 - 1), Int(-1), Int(-1)}, "-1 18446744073709551615 ffffffffffffffff"},
		{"%zd %jd %td %lld", []Value{Int(-1), Int(-1), Int(-1), Int(5000000000)}, "-1 -1 -1 5000000000"},
		{"%Ld %hld", []Value{Int(5000000000), Int(5000000000)}, "705032704 705032704"},
		{"%05d|%-05d", []Value{Int(-5), Int(-5)}, "000-5|-5000"},
		{"%+d %+d %+04d %+u %+x", []Value{Int(5), Int(0), Int(5), Int(5), Int(5)}, "+5 +0 00+5 5 5"},
		{"% d", []Value{Int(5)}, "5"},
		{"%.3d %.3s %5.1s", []Value{Int(5), Str("abcdef"), Str("abc")}, "5 abcdef   abc"},
		{"%#x %#x %#X %#o %#o %#010x", []Value{Int(255), Int(0), Int(255), Int(8), Int(0), Int(255)}, "0xff 0 0XFF 010 0 0000000xff"},
		{"%p %p %6p %-8p|", []Value{Int(0), Int(0xabc), Int(0), Pointer(0x10)}, "0 0xabc      0 0x10    |"},
		{"%lp", []Value{Int(-1)}, "0xffffffffffffffff"},
		{"%c%c %4c %04c", []Value{Int(65), Int(0x142), Int(66), Int(67)}, "AB    B 000C"},
		{"%04s|%-4s|", []Value{Str("ab"), Str("ab")}, "00ab|ab  |"},
		{"%s %s %s %+s %+s", []Value{Int(5), Bool(true), Uint(7), Int(5), Tuple(Int(1), Int(-2))}, "5 true 7 +5 (+1, -2)"},
		{"[%6s]", []Value{Tuple(Int(1), Int(2))}, "[     (1, 2)]"},
		{"[%4s]", []Value{Record(Field{"a", Int(1)})}, "[  { .a = 1 }]"},
		{"%s", []Value{stack}, "\n        f\n"},
		{"%d %s %-5s %5s", []Value{Sym("ONE", 1), Sym("ONE", 1), Sym("A", 0), Sym("B", 1)}, "1 ONE A         B"},
		{"%d %x", []Value{Bool(true), Bool(false)}, "1 0"},
		{"%d|%x", []Value{Str("abc"), Tuple(Int(1))}, "!{invalid integer conversion: abc}|!{invalid integer conversion: (1)}"},
		{"%r|%rx|%rh|%r", []Value{Buffer([]byte("Hi\x00")), Buffer([]byte("Hello\x00")), Buffer([]byte("Hello\x00")), Str("s")},
			`Hi\x00|\x48\x65\x6c\x6c\x6f\x00|48 65 6c 6c 6f 00|s`},
		{"%gr %gr %gr %gr %gr", []Value{Int(0x1), Int(0), Uint(0xcc0), Uint(0x100cc0), Uint(0x40000cc0)},
			"GFP_DMA 0 GFP_KERNEL GFP_USER GFP_KERNEL|0x40000000"},
		{"%gr", []Value{Bool(true)}, "!{invalid GFP flags conversion: true}"},
		// bpftrace 0.17 prints the text after the last conversion as written.
		{"100%% %5%|%k|%", nil, "100%% %5%|%k|%"},
		{"%%%\n", nil, "%%%\n"},
		{"x%%y %5%|%d%%\n", []Value{Int(7)}, "x%y %|7%%\n"},
		{"%d %5%|%%\n", []Value{Int(7)}, "7 %5%|%%\n"},
		{"%*d|%.*d", []Value{Int(1), Int(2)}, "1|2"},
		{"%d and %d", []Value{Int(1)}, "1"}, // bpftrace prints the last fragment only
	}
	for _, tt := range tests {
		f, err := ParseFormat(tt.format)
		if err != nil {
			t.Fatalf("ParseFormat(%q): %v", tt.format, err)
		}
		if got := f.Sprint(tt.args); got != tt.want {
			t.Errorf("Sprint(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{
		"", "%", "%%", "%d", "%-+ #05.3lld", "%5%", "%*.*s", "%rx%rh%r%gr%g", "%hhu %zu %jx %tX",
		"%0-5d", "%.d", "%5.", "100%", "%k %q %", "%99999999999d", "%s\n", "%lLhjzt d",
		"%%%\n", "x%%y %d%%", "%-999999999d", "%.65536d", "%65535%",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		format, err := ParseFormat(s)
		if err != nil {
			return
		}
		args := make([]Value, format.NumArgs())
		kinds := make([]Arg, format.NumArgs())
		for i := range args {
			args[i] = []Value{Int(-1), Str("x"), Buffer([]byte{0, 'a'}), Tuple(Uint(1)), Value{}}[i%5]
			kinds[i] = Arg{Class: ArgClass(i % 6)}
		}
		_ = format.Check(kinds)
		_ = format.Check(nil)
		for _, sp := range format.specs {
			if sp.width > 1<<12 {
				return // valid, but too slow to print
			}
		}
		out := format.Sprint(args)
		if format.NumArgs() == 0 && strings.Count(out, "%") > strings.Count(s, "%") {
			t.Errorf("Sprint(%q) = %q adds %%", s, out)
		}
	})
}

func TestMaxWidth(t *testing.T) {
	f, err := ParseFormat("%-65535d|")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Sprint([]Value{Int(1)}); len(got) != MaxWidth+1 || !strings.HasPrefix(got, "1 ") {
		t.Errorf("Sprint gave %d bytes starting %.5q, want %d", len(got), got, MaxWidth+1)
	}
}

package runtime

import (
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// TestBlockExprsAndMacros runs block expressions and macros through the
// kernel; want is what the program prints before exit.
func TestBlockExprsAndMacros(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, src, want string }{
		{"block value",
			`BEGIN { $x = { let $a = 2; $a * 3 }; print(($x, { "s" }, { (1, "t") })); exit(); }`,
			"(6, s, (1, t))"},
		{"block scope",
			`BEGIN { let $a = 1; $b = { let $a = 5; $a + 1 }; print(($a, $b)); exit(); }`,
			"(1, 6)"},
		{"block in keys and conditions",
			`BEGIN { @m[{ 1 }] = 7; if ({ $c = 1; $c == 1 }) { print(@m[{ 0 + 1 }]); } exit(); }`,
			"7"},
		{"exit in a block",
			`BEGIN { $x = { exit(); 1 }; print(99); }`,
			""},
		{"aggregation a block ends in",
			`macro myavg(x) { avg(x) } BEGIN { @a = { let $a = 100; avg($a) }; @b[1] = myavg(5); @c = { count() }; print(@a); print(@b); print(@c); exit(); }`,
			"@a: 100\n@b[1]: 5\n@c: 1"},
		{"type arguments",
			`struct Foo { char m; } macro sof(a, b) { sizeof(a[2]) + sizeof(b*) + sizeof(b) } BEGIN { print(sof(typeof(uint64*), typeof(struct Foo))); exit(); }`,
			"25"},
		{"type arguments passed on",
			`macro m(t) { sizeof(t) + 2 } macro n(z) { print(m(typeof(z))); } BEGIN { n(typeof(uint64*)); exit(); }`,
			"10"},
		{"type argument in a cast",
			`macro cst(a) { (a*)-1 } BEGIN { print(cst(typeof(uint8))); exit(); }`,
			"0xff"}, // -1 is an int8, zero-extended into the pointer
		{"typeof a name argument",
			`macro add(x) { let $y: typeof(x); if (true) { $y = 1 } x + $y } BEGIN { print(add((int8)1)); exit(); }`,
			"2"},
		{"variable by reference",
			`macro inc($x) { $x += 1; $x } BEGIN { $a = 1; $b = inc($a); print(($a, $b)); exit(); }`,
			"(2, 2)"},
		{"map by reference",
			`macro set(@x) { @x[1] = 2; } BEGIN { @a[1] = 1; set(@a); print(@a[1]); exit(); }`,
			"2"},
		{"own variables apart",
			`macro inc(x) { $y = x + 1; $y } BEGIN { $y = 2; $z = inc(5); print(($y, $z)); exit(); }`,
			"(2, 6)"},
		{"expression at each use",
			`macro side_effects(x) { x; x; x; } BEGIN { side_effects({ printf("hi") }); printf("\n"); exit(); }`,
			"hihihi"},
		{"argument evaluated at each use",
			`macro inc(x) { $y = x + 1; $z = x + 2; $y + $z } BEGIN { $y = 2; print(inc({ $y += 1; $y })); exit(); }`,
			"10"},
		{"nested macros",
			`macro add1(x) { x + 1 } macro add2(y) { y + add1(y) } macro add3(z) { z + add2(z) } BEGIN { print(add3(1)); exit(); }`,
			"4"},
		{"nested by reference",
			`macro add1($x) { $x += 1; } macro add2($y) { add1($y); $y += 1; } BEGIN { $a = 1; add2($a); print($a); exit(); }`,
			"3"},
		{"loops in macros",
			`macro total(@a) { let $x = 0; for ($kv : @a) { $x += $kv.1; } $x } BEGIN { @m[1] = 5; @m[2] = 10; print(total(@m)); exit(); }`,
			"15"},
		{"without parentheses",
			`macro one() { $x = 1; $x } BEGIN { $a = one; print($a); exit(); }`,
			"1"},
		{"string format",
			`macro fmt() { "<%d>\n" } BEGIN { printf(fmt(), 3); exit(); }`,
			"<3>"},
		{"exit in a macro",
			`macro early() { exit(); } BEGIN { early(); print(1); }`,
			""},
		{"overloads",
			`macro k($x) { "var" } macro k(@x) { "map" } macro k(x) { "expr" } BEGIN { $v = 0; @m = 0; print((k($v), k(@m), k(1))); exit(); }`,
			"(var, map, expr)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runScript(t, tt.src)
			line, _, _ := strings.Cut(got, "\n\n")
			if line != tt.want {
				t.Errorf("got %q, want %q", line, tt.want)
			}
		})
	}
}

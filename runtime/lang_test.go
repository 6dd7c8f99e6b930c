package runtime

import (
	"testing"

	"gtrace/internal/testutils"
)

// TestLanguageGaps runs, on the kernel, what current bpftrace's language
// has beyond the expressions of TestCurrentExpressions: if as an
// expression, str() lengths known at run time, indexes of tuples,
// arrays and strings computed or known only at run time, avg's value read in BPF,
// bit fields, literal types and tuple layouts.
func TestLanguageGaps(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, src, want string }{
		{"nested if expressions", `BEGIN { let $x = 1; let $y = 2; let $z = 3; print(if ($x) { if ($y) { if ($z) { $x } else { $y } } else { $z } } else { 0 }); $a = if ($x == 2) { 5 } else if ($z) { 6 } else { 7 }; print($a); exit(); }`, "1\n6\n\n\n"},
		{"str length counts the NUL", `BEGIN { $s = "zztest"; $p = (uint64)&$s; $n = (uint16)5; printf("%s %s %s\n", str($p, 5), str($p, $n), str($p, $n + 100)); exit(); }`, "zzte zzte zztest\n\n\n"},
		{"array-style tuple access", `BEGIN { $a = (1, "two", 3); print(($a[1 + 1], $a[1])); exit(); }`, "(3, two)\n\n\n"},
		{"array index known at run time", `BEGIN { $a = (uint8[4])(uint32)0x04030201; $i = (uint64)2; printf("%d %d\n", $a[$i], $a[$i + 1]); exit(); }`, "3 4\n\n\n"},
		{"array index out of bounds reads element 0", `BEGIN { $a = (uint8[4])(uint32)0x04030201; $i = (uint64)100; printf("%d\n", $a[$i]); exit(); }`, "1\n\n\n"},
		{"string index known at run time", `BEGIN { $s = "foo"; $i = (uint64)1; $j = (uint64)10; printf("%c %d\n", $s[$i], $s[$j]); exit(); }`, "o 102\n\n\n"},
		{"avg of negative values read in BPF", `BEGIN { @a = avg(-1); @a = avg(-1); @a = avg(-10); @b = avg(7); @b = avg(2); printf("%d %d %d\n", @a == -4, @a, @b); clear(@a); clear(@b); exit(); }`, "1 -4 4\n\n\n"},
		{"bit fields read unsigned", `struct Bar { short a:4, b:8, c:3, d:1; } BEGIN { $v = (uint16)0xfd91; $p = (struct Bar *)&$v; printf("%d %d %d %d\n", $p->a, $p->b, $p->c, $p->d); exit(); }`, "1 217 7 1\n\n\n"},
		{"literals are the smallest signed integer", `BEGIN { $x = 1; $y = -200; $i = 0; while ($i < 300) { $i++; } $j = 0; $j += 1000; printf("%d %d %d %d %d\n", sizeof($x), sizeof($y), sizeof(70000), $i, $j); exit(); }`, "1 2 4 300 1000\n\n\n"},
		{"tuples laid out as C structs", `BEGIN { $a = ((int8)1, (int16)2, (int32)3); $b = ((int32)1, (int16)2, (int8)3); $c = ((int8)-100, (int8)100, "abcdef", 3, (int32)1, (int64)-10, (int8)10, (int16)-555, "abc"); printf("%d %d %d\n", sizeof($a), sizeof($b), sizeof($c)); print($c); @[$c] = $a; exit(); }`, "8 8 32\n(-100, 100, abcdef, 3, 1, -10, 10, -555, abc)\n\n\n@[-100, 100, abcdef, 3, 1, -10, 10, -555, abc]: (1, 2, 3)\n"},
		{"tuple elements widened", `BEGIN { $a = ((int8)-1, "x"); $a = ((int64)-5, "yyyy"); print($a); $b = ((int8)-3, 1); print($b); $b = (5, (int16)-700); print($b); exit(); }`, "(-5, yyyy)\n(-3, 1)\n(5, -700)\n\n\n"},
		{"a value that reads the variable it replaces", `BEGIN { $t = (1, 2); $t = ($t.1, $t.0); print($t); $s = "ab"; $s = str_concat($s, "cd"); $s = str_concat("x", $s); print($s); $r = (a = 1, b = "x"); $r = (b = "y", a = $r.a + 1); print($r); exit(); }`, "(2, 1)\nxabcd\n{ .a = 2, .b = y }\n\n\n"},
		{"pointer from a narrow integer", `BEGIN { print((uint8 *)-1); print((int32 *)(uint64)-1); exit(); }`, "0xff\n0xffffffffffffffff\n\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := runScript(t, tt.src); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

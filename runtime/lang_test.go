package runtime

import (
	"testing"

	"gtrace/internal/testutils"
)

// TestLanguageGaps runs, on the kernel, what current bpftrace's language
// has beyond the expressions of TestCurrentExpressions: if as an
// expression, str() lengths known at run time, indexes of tuples,
// arrays and strings computed or known only at run time, avg's value read in BPF,
// bit fields.
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := runScript(t, tt.src); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

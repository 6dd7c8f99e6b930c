package runtime

import (
	"bytes"
	"strings"
	"testing"

	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/internal/testutils"
	"gtrace/output"
)

// compile compiles src for the running kernel.
func compile(t *testing.T, src string) *codegen.Output {
	t.Helper()
	prog, err := compiler.Compile([]byte(src), nil)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return prog.Output
}

// runScript compiles and runs src and returns what it printed.
func runScript(t *testing.T, src string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code, err := Run(compile(t, src), &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Quiet: true})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String(), code
}

// TestExpressions runs BEGIN programs through the kernel. The expected
// values follow C's rules on 64-bit integers, worked out by hand.
func TestExpressions(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name, body, want string
	}{
		{"precedence", `printf("%d %d %d", 2 + 3 * 4, (2 + 3) * 4, 10 - 4 - 3)`, "14 20 3"},
		{"division", `printf("%d %d %d", 17 / 5, 17 % 5, 7 / 0)`, "3 2 1"}, // 1, as bpftrace HEAD gives,
		{"signed shift", `$x = -16; printf("%d %d", $x >> 2, 1 << 10)`, "-4 1024"},
		{"unsigned promotion", `$u = (uint64)1; printf("%d", -1 > $u)`, "1"},
		{"narrow promotion", `$u = (uint32)1; printf("%d", -1 > $u)`, "0"},
		{"casts", `printf("%d %d %d", (int8)300, (uint8)-1, (int16)65535)`, "44 255 -1"},
		{"logic", `printf("%d %d %d %d", 1 && 0, 1 || 0, !5, ~0)`, "0 1 0 -1"},
		{"comparison", `printf("%d %d %d", 3 >= 3, 2 != 2, -1 < 1)`, "1 0 1"},
		{"ternary", `$a = 5; printf("%s %d", $a > 3 ? "big" : "small", $a < 3 ? 1 : 2)`, "big 2"},
		{"strings", `printf("%d %d %d", "abc" == "abc", "abc" == "abd", "ab" != "abc")`, "1 0 1"},
		{"strncmp", `printf("%d %d", strncmp("hello", "help", 3), strncmp("hello", "help", 4))`, "0 1"},
		{"while", `$i = 0; $s = 0; while ($i < 10) { $i++; if ($i % 2 == 0) { continue; } if ($i > 7) { break; } $s += $i; } printf("%d %d", $i, $s)`, "9 16"},
		{"unroll", `$n = 1; unroll(5) { $n *= 2; } printf("%d", $n)`, "32"},
		{"incdec", `$i = 5; $a = $i++; $b = ++$i; $c = $i--; printf("%d %d %d %d", $a, $b, $c, $i)`, "5 7 7 6"},
		{"compound", `$x = 6; $x += 4; $x *= 3; $x -= 1; $x /= 2; $x %= 8; $x <<= 2; $x |= 1; printf("%d", $x)`, "25"},
		{"tuples", `$t = (1, "two", -3); printf("%d %s %d", $t.0, $t.1, $t.2)`, "1 two -3"},
		{"map values", `@x = 3; @x += 4; @x++; @s["k"] = "v"; @y[1] = 1; printf("%d %s %d", @x, @s["k"], @y[2])`, "8 v 0"},
		{"has_key", `@m[1] = 1; printf("%d %d", has_key(@m, 1), has_key(@m, 2))`, "1 0"},
		{"delete", `@m[1] = 5; delete(@m[1]); printf("%d", @m[1])`, "0"},
		{"bswap", `printf("%x", bswap((uint32)0x11223344))`, "44332211"},
		{"positional count", `printf("%d", $#)`, "0"},
		{"printf widths", `printf("[%5d|%-4s|%x|%c]", 42, "ab", 255, 65)`, "[   42|ab  |ff|A]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runScript(t, "BEGIN { "+tt.body+"; exit(); }")
			// The printf line, then the two blank lines printed at exit,
			// then any maps.
			line, _, _ := strings.Cut(got, "\n\n")
			if line != tt.want {
				t.Errorf("got %q, want %q", line, tt.want)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	testutils.RequireRoot(t)
	if _, code := runScript(t, `BEGIN { exit(7); }`); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
}

// TestAggregations checks the values each aggregation prints at exit.
func TestAggregations(t *testing.T) {
	testutils.RequireRoot(t)
	got, _ := runScript(t, `BEGIN {
		@c = count(); @c = count(); @c = count();
		@s = sum(5); @s = sum(-2);
		@mn = min(4); @mn = min(-3); @mn = min(9);
		@mx = max(4); @mx = max(11); @mx = max(9);
		@a = avg(3); @a = avg(4);
		@k[1, "x"] = count(); @k[1, "x"] = count(); @k[2, "y"] = count();
		exit();
	}`)
	want := "\n\n@a: 3\n@c: 3\n@k[2, y]: 1\n@k[1, x]: 2\n@mn: -3\n@mx: 11\n@s: 3\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

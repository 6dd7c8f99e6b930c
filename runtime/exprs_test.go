package runtime

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// TestCurrentExpressions runs, on the kernel, the expressions of current
// bpftrace that 0.17 lacks: discard, ?:, return with a value, pointer
// steps and conditions, array casts, typeof, & of a variable and enums.
// want is the whole output: what the program printed, the two blank
// lines of its exit, then its maps.
func TestCurrentExpressions(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, src, want string }{
		{"elvis", `BEGIN { $x = 1; $a = $x ?: 10; $b = 0 ?: 20; print(($a, $b)); exit(); }`, "(1, 20)\n\n\n"},
		{"elvis evaluates once", `BEGIN { @n = 0; $v = (++@n) ?: 5; printf("%d %d\n", $v, @n); exit(); }`, "1 1\n\n\n@n: 1\n"},
		{"ternary of statements", `BEGIN { $x = 0; $x ? printf("a\n") : printf("b\n"); 1 ? printf("c\n") : printf("d\n"); exit(); }`, "b\nc\n\n\n"},
		{"discard", `BEGIN { _ = 1 + 2; @a[1] = 1; _ = has_key(@a, 1); exit(); }`, "\n\n@a[1]: 1\n"},
		{"return value", `BEGIN { $a = 1; print($a); if ($a) { return $a; } print(2); } interval:ms:10 { exit(); }`, "1\n\n\n"},
		{"pointer +=", `BEGIN { @ = (int16 *)0x32; @ += 1; exit(); }`, "\n\n@: 0x34\n"},
		{"pointer -= map", `BEGIN { @dec = 4; @ = (int32 *)0x32; @ -= @dec; exit(); }`, "\n\n@: 0x22\n@dec: 4\n"},
		{"pointer ++ and --", `BEGIN { @a = (int32 *)0x32; @a++; $p = (int64 *)0x10; $p++; ++$p; $p--; @b = $p; exit(); }`, "\n\n@a: 0x36\n@b: 0x18\n"},
		{"struct pointer minus", `struct A { int a; int b; char c[28] }; BEGIN { $a = (struct A *)1024; printf("%lu %lu\n", sizeof(struct A), $a - 5); exit(); }`, "36 844\n\n\n"},
		{"pointer conditions", `BEGIN { if (curtask) { @a = 1; } @b = curtask ? 1 : 2; @c = (curtask && 0) ? 1 : 2; @d = (curtask || 0) ? 1 : 2; exit(); }`, "\n\n@a: 1\n@b: 1\n@c: 2\n@d: 1\n"},
		{"int to array", `BEGIN { printf("%x %x\n", ((int8[8])12345)[0], ((int8[])12345)[1]); exit(); }`, "39 30\n\n\n"},
		{"string to array", `BEGIN { print((int8[])"hello"); exit(); }`, "[104,101,108,108,111,0]\n\n\n"},
		{"array to int", `BEGIN { $a = (uint8[4])(uint32)0x01020304; print($a); printf("%x\n", (uint32)$a); exit(); }`, "[4,3,2,1]\n1020304\n\n\n"},
		{"literal widened to array", `BEGIN { print((uint8[4])1); exit(); }`, "[1,0,0,0]\n\n\n"},
		{"bool array", `BEGIN { $b = (bool[2])(uint16)256; print(($b[0], $b[1])); @a = (bool[])(uint32)1; exit(); }`, "(false, true)\n\n\n@a: [true,false,false,false]\n"},
		{"typeof", `BEGIN { $a = (int8)1; let $b: typeof($a) = 2; let $c: typeof(uint16); printf("%d %d %d\n", sizeof($b), sizeof($c), sizeof(typeof(struct task_struct *))); exit(); }`, "1 2 8\n\n\n"},
		{"typeof cast", `BEGIN { $a = (int8)1; print((typeof($a))300); exit(); }`, "44\n\n\n"},
		{"C type names", `BEGIN { let $a: typeof(size_t) = 1; let $b: typeof(size_t*) = &$a; $c = (u32)-1; printf("%d %u %d\n", *$b, $c, sizeof(pid_t)); exit(); }`, "1 4294967295 4\n\n\n"},
		{"address of variables", `BEGIN { $a = 5; $p = &$a; $a = 7; $s = "str"; $q = (int8 *)&$s; printf("%d %c\n", *$p, *$q); exit(); }`, "7 s\n\n\n"},
		{"delete value", `BEGIN { @a[1] = 1; @a[2] = 2; $x = delete(@a, 1); $y = delete(@a[3]); delete(@a, 4); printf("%d %d\n", $x, $y); exit(); }`, "1 0\n\n\n@a[2]: 2\n"},
		{"packed structs", `struct foo { int x; char y; int z; } struct bar { int x; char y; int z; } __attribute__((packed)) struct baz { char a; long b; } /* c */ __attribute__ ((__packed__)) __attribute__((aligned(1))) BEGIN { printf("%d %d %d\n", sizeof(struct foo), sizeof(struct bar), sizeof(struct baz)); exit(); }`, "12 9 9\n\n\n"},
		{"string index", `BEGIN { $p = "/abc"; if ($p[0] == "/"[0]) { printf("%c %d %d\n", $p[1], $p[4], sizeof($p[0])); } exit(); }`, "a 0 1\n\n\n"},
		{"record fields", `BEGIN { $v = 99; $t = (a=0, b=1, c="str", d=(5, 6), e=$v); printf("%d %d %s %d %d %d\n", $t.a, $t.b, $t.c, $t.d.0, $t.d.1, $t.e); exit(); }`, "0 1 str 5 6 99\n\n\n"},
		{"record print", `BEGIN { $v = (x=1, y=2); $t = (a=0, b=1, c="str", d=(5, 6), e=$v); print($t); print((z=1)); exit(); }`, "{ .a = 0, .b = 1, .c = str, .d = (5, 6), .e = { .x = 1, .y = 2 } }\n{ .z = 1 }\n\n\n"},
		{"record order", `BEGIN { $a = (foo={ printf("hello"); 1 }, bar={ printf("world"); 2 }); $a = (bar={ printf("hello"); 1 }, foo={ printf("world\n"); 2 }); print($a); exit(); }`, "helloworldhelloworld\n{ .foo = 2, .bar = 1 }\n\n\n"},
		{"records in maps", `BEGIN { @[(a=1, b="x")] = ("bye", (m=2, n=10)); @r = (x=1, y="a"); @r = (y="bcd", x=2); exit(); }`, "\n\n@[{ .a = 1, .b = x }]: (bye, { .m = 2, .n = 10 })\n@r: { .x = 2, .y = bcd }\n"},
		{"variable widened later", `BEGIN { $a = ("hi", 1); print($a); $a = ("hellolongstr", 2); print($a); $b = (1, ("hi", 1)); $b = (2, ("hello", 3)); print($b); exit(); }`, "(hi, 1)\n(hellolongstr, 2)\n(2, (hello, 3))\n\n\n"},
		{"nested tuples widened", `BEGIN { $a = ("hi", ("hellolongstr", 2)); print($a); $a = ("hellolongstr", ("hi", 5)); print($a); @[1] = ("hi", ("hellolongstr", 2)); @[1] = ("hellolongstr", ("hi", 5)); $r = (a = 1, b = (c = "x", d = 2)); $r = (b = (d = 3, c = "yyyy"), a = 4); print($r); exit(); }`, "(hi, (hellolongstr, 2))\n(hellolongstr, (hi, 5))\n{ .a = 4, .b = { .c = yyyy, .d = 3 } }\n\n\n@[1]: (hellolongstr, (hi, 5))\n"},
		{"variable declared before assigned", `BEGIN { let $a; if ($a) { $a = 1; } @b = $a; exit(); }`, "\n\n@b: 0\n"},
		{"print of records never assigned", `BEGIN { print(@r); print(@t); if (pid == 0) { @r = (a=1, b=(2, "hi")); @t = (1, "x"); } exit(); }`, "@r: { .a = 0, .b = (0, ) }\n@t: (0, )\n\n\n"},
		{"aggregation values", `BEGIN { @a = avg(5); @a = avg(8); @c = count(); @c = count(); @s = sum(5); @mn = min(1); @mn = min(-3); @mx = max(-1); @k[1] = sum(7); print((@a, @c, @s, @mn, @mx, @k[1], @k[2])); print(((bool)@c, (bool)@z)); @z = sum(0); clear(@a); clear(@c); clear(@s); clear(@mn); clear(@mx); clear(@k); clear(@z); exit(); }`, "(6, 2, 5, -3, -1, 7, 0)\n(true, false)\n\n\n"},
		{"top of histograms that tie", `BEGIN { @[3, "a"] = hist(30); @[1, "b"] = hist(10); @[2, "c"] = hist(20); print(@, 2); clear(@); exit(); }`, "@[2, c]:\n[16, 32)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n@[3, a]:\n[16, 32)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n\n\n"},
		{"dereference of an address", `BEGIN { $a = (1, "hello", 2); print(*(&$a)); $s = "str"; print(*&$s); $i = 5; print(*&$i + 1); exit(); }`, "(1, hello, 2)\nstr\n6\n\n\n"},
		{"array equality", `BEGIN { $a = (int8[])12345; $b = (int8[])12345; $c = (int8[])12346; printf("%d %d %d\n", $a == $b, $a == $c, $a != $c); exit(); }`, "1 0 1\n\n\n"},
		{"buffer equality", `BEGIN { $a = buf("hi", 2); $b = buf("bye", 3); $c = buf("hi", 2); $d = buf("hix", 2); printf("%d %d %d %d %d\n", $a == $a, $a != $b, $a == $c, $a == $b, $a == $d); exit(); }`, "1 1 1 0 1\n\n\n"},
		{"enum cast", `enum Foo { ONE = 1, TWO = 2, OTHER = 99999 }; BEGIN { $x = 100; printf("%d %s %s\n", ONE, (enum Foo)1, (enum Foo)$x); exit(); }`, "1 ONE 100\n\n\n"},
		{"kernel enum", `BEGIN { $k = (enum pid_type)1; print($k); @[$k, (int16)2] = (enum pid_type)0; exit(); }`, "PIDTYPE_TGID\n\n\n@[PIDTYPE_TGID, 2]: PIDTYPE_PID\n"},
		{"anonymous enum", `enum { FOO = 333, BAR }; BEGIN { $f = FOO; print($f); print((FOO, BAR)); @m[BAR] = FOO; exit(); }`, "FOO\n(FOO, BAR)\n\n\n@m[BAR]: FOO\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := runScript(t, tt.src); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestRecordJSON checks a record's JSON, an object in field order.
func TestRecordJSON(t *testing.T) {
	testutils.RequireRoot(t)
	var stdout, stderr bytes.Buffer
	src := `BEGIN { $v = (x=1, y=2); @a = (a=0, b=1, c="str", d=(5, 6), e=$v); exit(); }`
	if _, err := Run(compile(t, src), &Options{Printer: output.NewJSON(&stdout), Stderr: &stderr, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	want := `{"type": "map", "data": {"@a": {"a": 0, "b": 1, "c": "str", "d": [5,6], "e": {"x": 1, "y": 2}}}}` + "\n"
	if got := stdout.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParent checks ppid and pcomm: the task that forked this test is
// a thread of its parent process, with the parent's name.
func TestParent(t *testing.T) {
	testutils.RequireRoot(t)
	got, _ := runScript(t, `BEGIN { printf("%d %s\n", ppid, pcomm); exit(); }`)
	var ppid int
	var pcomm string
	if _, err := fmt.Sscanf(got, "%d %s", &ppid, &pcomm); err != nil {
		t.Fatalf("output %q: %v", got, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", ppid))
	if err != nil {
		t.Fatalf("ppid %d: %v", ppid, err)
	}
	if want := fmt.Sprintf("\nTgid:\t%d\n", os.Getppid()); !strings.Contains(string(status), want) {
		t.Errorf("ppid %d is not a thread of the parent %d:\n%s", ppid, os.Getppid(), status)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(comm)); pcomm != want {
		t.Errorf("pcomm %q, want %q", pcomm, want)
	}
}

// TestDivideByZero checks that a division or modulo by zero gives 1 and
// warns at its place in the script each time it runs.
func TestDivideByZero(t *testing.T) {
	testutils.RequireRoot(t)
	var stdout, stderr bytes.Buffer
	src := `BEGIN { @zero = 0; $x = 10; $x %= @zero; printf("%d %d\n", 7 / @zero, $x); exit(); }`
	if _, err := Run(compile(t, src), &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if got, want := stdout.String(), "1 1\n\n\n@zero: 0\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	warning := "WARNING: Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result.\n"
	want := "stdin:1:29-40: " + warning + src + "\n" + strings.Repeat(" ", 28) + strings.Repeat("~", 11) + "\n" +
		"stdin:1:60-69: " + warning + src + "\n" + strings.Repeat(" ", 59) + strings.Repeat("~", 9) + "\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
}

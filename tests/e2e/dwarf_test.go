package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// dwarfProgram calls functions whose parameters a script reads by name,
// after a pause for the tracer to attach.
const dwarfProgram = `#include <unistd.h>
int GLOBAL_A = 0x55555555;
char GLOBAL_D = -8;
struct Foo { int a; char b[10]; int c[3]; };
struct Bar { int x; struct Foo *foos[2]; };
__attribute__((noinline)) int one(int *n, char c) { return *n + c; }
__attribute__((noinline)) struct Foo *two(struct Foo *foo)
{
  return foo;
}
__attribute__((noinline)) int bar(struct Bar *b) { return b->x; }
__attribute__((noinline)) long mixed(__int128 big, double d, int after) { return big + d + after; }
int main(void) {
	usleep(300000);
	int n = 13;
	struct Foo f = {123, "hello", {1, 2, 3}};
	struct Bar b = {7, {&f, &f}};
	one(&n, 'x');
	two(&f);
	bar(&b);
	mixed(1, 2.5, 42);
	return 0;
}
`

// hexPointer matches a pointer as print shows it.
var hexPointer = regexp.MustCompile(`0x[0-9a-f]+`)

// twoLine is the line of two's opening brace in dwarfProgram.
const twoLine = 8

// TestUprobeDwarfArgs reads uprobe arguments by name, typed by the
// program's DWARF, alone and as the whole args record.
func TestUprobeDwarfArgs(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "dwarfargs", map[string]string{"dwarfargs.c": dwarfProgram}, "-g", "-O0")
	for _, tc := range []struct{ name, script, want string }{
		{"char and pointer", `uprobe:BIN:one { printf("%c %d\n", args.c, *args.n); }`, "x 13\n"},
		{"arrow", `uprobe:BIN:one { printf("%c\n", args->c); }`, "x\n"},
		{"struct fields", `uprobe:BIN:two { printf("%d %s\n", args.foo->a, args.foo->b); print(args.foo->c); }`,
			"123 hello\n[1,2,3]\n"},
		{"whole args", `uprobe:BIN:one { print(args.c); $a = args; print($a.c); @[args.c, (x = args)] = args.c; }`,
			"120\n120\n@[120, { .x = { .n = PTR, .c = 120 } }]: 120\n"},
		{"cast to a DWARF struct", `uprobe:BIN:two { printf("%d\n", ((struct Foo *)arg0)->a); }`, "123\n"},
		{"script struct first", `struct Foo { int z; } uprobe:BIN:two { printf("%d\n", ((struct Foo *)arg0)->z); }`, "123\n"},
		{"array of pointers", `uprobe:BIN:bar { let $x: struct Foo *[2] = args.b->foos; printf("%d\n", $x[1]->a); }`, "123\n"},
		{"after two registers and a float", `uprobe:BIN:mixed { print(args.after); }`, "42\n"},
		{"source line", `uprobe:BIN@dwarfargs.c:` + strconv.Itoa(twoLine) + ` { printf("%d\n", ((struct Foo *)arg0)->a); }`, "123\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "-c", bin, "-e", strings.ReplaceAll(tc.script, "BIN", bin))
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			got := hexPointer.ReplaceAllString(nonEmptyLines(harness.StripAttaching(r.Stdout)), "PTR")
			if got != tc.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

// nonEmptyLines drops the blank lines of out.
func nonEmptyLines(out string) string {
	var b strings.Builder
	for line := range strings.Lines(out) {
		if line != "\n" {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestUaddr reads globals through uaddr(), typed by their size, in a
// program loaded where it is linked and in one loaded anywhere.
func TestUaddr(t *testing.T) {
	testutils.RequireRoot(t)
	for _, flags := range [][]string{{"-no-pie", "-fno-pie"}, {"-pie", "-fPIE"}} {
		bin := harness.BuildC(t, "uaddr", map[string]string{"uaddr.c": dwarfProgram}, flags...)
		for _, probe := range []string{"uprobe:" + bin + ":one", "uprobe:" + bin + ":one+4"} {
			r := harness.Gtrace(t, "-c", bin, "-e", probe+` { printf("%x %d\n", *uaddr("GLOBAL_A"), *uaddr("GLOBAL_D")); }`)
			if got, want := harness.StripAttaching(r.Stdout), "55555555 -8\n"; r.Code != 0 || !strings.HasPrefix(got, want) {
				t.Errorf("%v %s: exit code %d, stdout %q, want %q; stderr:\n%s", flags, probe, r.Code, got, want, r.Stderr)
			}
		}
	}
}

// TestUprobeDwarfErrors checks that what DWARF can not answer is an
// error at its place in the script.
func TestUprobeDwarfErrors(t *testing.T) {
	testutils.RequireRoot(t)
	dir := filepath.Dir(harness.BuildC(t, "withdwarf", map[string]string{"dwarfargs.c": dwarfProgram}, "-g"))
	bin := filepath.Join(dir, "withdwarf")
	plain := harness.BuildC(t, "nodwarf", map[string]string{"dwarfargs.c": dwarfProgram})
	for _, tc := range []struct{ name, script, want string }{
		{"no debug info", `uprobe:` + plain + `:one { print(args.c); }`, "ERROR: no debuginfo found for " + plain},
		{"no such parameter", `uprobe:` + bin + `:one { print(args.x); }`, "ERROR: Can't find a field x in uprobe:" + bin + ":one"},
		{"bad line", `uprobe:` + bin + `@dwarfargs.c:1000 { exit(); }`, "ERROR: Unable to map 'dwarfargs.c:1000' to address"},
		{"bad file", `uprobe:` + bin + `@other.c:1 { exit(); }`, "ERROR: No compilation unit matches other.c"},
		{"uretprobe source line", `uretprobe:` + bin + `@dwarfargs.c:8 { exit(); }`, "ERROR: Source code location not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "--dry-run", "-e", tc.script)
			if r.Code == 0 || !strings.Contains(r.Stderr, tc.want) || !strings.HasPrefix(r.Stderr, "stdin:1:") {
				t.Errorf("exit code %d, stderr:\n%s\nwant a located %q", r.Code, r.Stderr, tc.want)
			}
		})
	}
}

// TestListUprobeDwarfArgs lists parameters with -lv, from the binary's
// DWARF or from a separate debug file found with --debuginfo.
func TestListUprobeDwarfArgs(t *testing.T) {
	bin := harness.BuildC(t, "listargs", map[string]string{"dwarfargs.c": dwarfProgram}, "-g")
	stripped := filepath.Join(filepath.Dir(bin), "stripped")
	debugDir := filepath.Join(filepath.Dir(bin), "dbg")
	if err := os.Mkdir(debugDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--only-keep-debug", bin, filepath.Join(debugDir, "stripped.debug")},
		{"--strip-debug", bin, stripped},
	} {
		if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
			testutils.Skip(t, "objcopy: "+err.Error()+": "+string(out))
		}
	}
	want := "uprobe:BIN:two\n    struct Foo* foo\n"
	for _, tc := range [][]string{{bin}, {stripped, "--debuginfo", debugDir}, {stripped, "--debuginfo=/nowhere:" + debugDir}} {
		r := harness.Gtrace(t, append([]string{"-lv", "uprobe:" + tc[0] + ":two"}, tc[1:]...)...)
		if w := strings.ReplaceAll(want, "BIN", tc[0]); r.Code != 0 || r.Stdout != w {
			t.Errorf("%q: exit code %d, stdout:\n%s\nwant:\n%s\nstderr: %s", tc, r.Code, r.Stdout, w, r.Stderr)
		}
	}
	r := harness.Gtrace(t, "-lv", "uprobe:"+stripped+":two")
	if w := "uprobe:" + stripped + ":two\n"; r.Stdout != w {
		t.Errorf("without its debug file: stdout:\n%s\nwant:\n%s", r.Stdout, w)
	}
}

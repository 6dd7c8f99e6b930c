package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// cdeclStructs are C definitions a script may carry, laid out by gtrace
// and by gcc.
const cdeclStructs = `
struct rec { int a; char c; long b; unsigned int f:3, g:5; short s[3]; struct rec *next; union { int i; char ch[6]; } u; char name[12]; };
struct packed_bits { unsigned char x:1; unsigned char y:7; unsigned short z:9; unsigned int w; };
enum color { RED, GREEN = 5, BLUE };
`

// TestScriptStructLayout checks sizeof and offsetof of a script's own
// structs against what gcc lays out for the same text.
func TestScriptStructLayout(t *testing.T) {
	testutils.RequireRoot(t)
	fields := []string{"sizeof(struct rec)", "offsetof(struct rec, b)", "offsetof(struct rec, s)",
		"offsetof(struct rec, next)", "offsetof(struct rec, u)", "offsetof(struct rec, name)",
		"sizeof(struct packed_bits)", "offsetof(struct packed_bits, w)", "GREEN", "BLUE"}
	var cArgs []string
	for _, f := range fields {
		cArgs = append(cArgs, "(long)("+f+")")
	}
	format := strings.Repeat("%ld ", len(fields))
	prog := fmt.Sprintf("#include <stdio.h>\n#include <stddef.h>\n%s\nint main(void) { printf(\"%s\\n\", %s); return 0; }\n",
		cdeclStructs, format, strings.Join(cArgs, ", "))
	bin := harness.BuildC(t, "layout", map[string]string{"layout.c": prog})
	want, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("%s\nBEGIN { printf(\"%s\\n\", %s); exit(); }", cdeclStructs, format, strings.Join(fields, ", "))
	r := harness.Gtrace(t, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got := harness.MapOutput(r.Stdout); got != string(want) {
		t.Errorf("gtrace %q, gcc %q", got, want)
	}
}

// recProgram passes a struct to a function three times.
const recProgram = `#include <string.h>
#include <unistd.h>
` + cdeclStructs + `
__attribute__((noinline)) void consume(struct rec *r) { __asm__ volatile("" : : "r"(r) : "memory"); }
int main(void) {
	usleep(200000);
	struct rec r = {0};
	for (int i = 0; i < 3; i++) {
		r.a = i; r.b = 1000 + i; r.g = i + 1; r.s[2] = 7 * i;
		strcpy(r.name, i == 1 ? "second" : "other");
		consume(&r);
	}
	return 0;
}
`

// TestScriptStructUprobe reads a program's struct through a uprobe's
// argument, cast to the script's own definition of the struct.
func TestScriptStructUprobe(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "rec", map[string]string{"rec.c": recProgram}, "-O1")
	script := cdeclStructs + `uprobe:` + bin + `:consume { $r = (struct rec *)arg0;
		printf("%d %d %d %d %s\n", $r->a, $r->b, $r->g, $r->s[2], $r->name); }`
	r := harness.Gtrace(t, "-c", bin, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "0 1000 1 0 other\n1 1001 2 7 second\n2 1002 3 14 other\n"
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

package codegen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// dwarfC is a program whose DWARF types a uprobe's args.
const dwarfC = `struct Foo { int a; char b[10]; };
int two(struct Foo *foo, int *n) { return foo->a + *n; }
int main(void) { struct Foo f = {1, "x"}; int n = 2; return two(&f, &n); }
`

// withDwarfBinary puts into src, for DWARF_BINARY, a program with
// DWARF, built with gcc.
func withDwarfBinary(tb testing.TB, src string) string {
	tb.Helper()
	if !strings.Contains(src, "DWARF_BINARY") {
		return src
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		testutils.Skip(tb, "gcc is not installed; it builds the program whose DWARF types a uprobe's args")
	}
	// Not tb.TempDir(), whose name, from the test's, may hold an '@'.
	dir, err := os.MkdirTemp("", "codegen-dwarf")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "dwarf")
	if err := os.WriteFile(bin+".c", []byte(dwarfC), 0o644); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-o", bin, bin+".c").CombinedOutput(); err != nil {
		tb.Fatalf("gcc: %v\n%s", err, out)
	}
	return strings.ReplaceAll(src, "DWARF_BINARY", bin)
}

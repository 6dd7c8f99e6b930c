package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// LeafProgram calls leaf through middle from main 5 times, passes leaf a
// pointer to a function, and lingers so that a tracer can read its memory
// map before it exits.
const LeafProgram = `
#include <unistd.h>
int counter;
__attribute__((noinline)) void target(void) { counter++; }
__attribute__((noinline)) int leaf(void (*f)(void)) { f(); return counter; }
__attribute__((noinline)) int middle(int n) { int s = 0; for (int i = 0; i < n; i++) s += leaf(target); return s; }
int main(void) { usleep(300000); int s = middle(5); usleep(300000); return s == 15 ? 0 : 1; }
`

// BuildC compiles C sources, named by file name, into the binary name in
// a temporary directory of tb, with extra compiler flags, and returns its
// path. A .cc source is C++, built with g++. It skips without the
// compiler, or without <sys/sdt.h> (Debian's systemtap-sdt-dev) for a
// source that includes it.
func BuildC(tb testing.TB, name string, srcs map[string]string, flags ...string) string {
	tb.Helper()
	compiler := "gcc"
	for file, src := range srcs {
		if strings.HasSuffix(file, ".cc") {
			compiler = "g++"
		}
		if strings.Contains(src, "<sys/sdt.h>") {
			if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
				testutils.Skip(tb, "<sys/sdt.h> is not installed (Debian: systemtap-sdt-dev)")
			}
		}
	}
	if _, err := exec.LookPath(compiler); err != nil {
		testutils.Skip(tb, compiler+" is not installed")
	}
	dir := tb.TempDir()
	bin := filepath.Join(dir, name)
	args := append([]string{"-o", bin}, flags...)
	for file, src := range srcs {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			tb.Fatal(err)
		}
		args = append(args, path)
	}
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		tb.Fatalf("%s %q: %v\n%s", compiler, args, err, out)
	}
	return bin
}

package e2e

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// stacksProgram calls outer, which inlines middle, which inlines inner,
// after a pause for the tracer to attach.
const stacksProgram = `#include <unistd.h>
static volatile int sink;
__attribute__((always_inline)) static inline void inner(int x)
{
  sink = x;
  __asm__ volatile("marker: nop");
}
__attribute__((always_inline)) static inline void middle(int x)
{
  inner(x + 1);
}
__attribute__((noinline)) void outer(int x)
{
  middle(x);
}
int main(void) { usleep(300000); outer(1); return 0; }
`

// TestStackFormats prints user stacks in each mode, with source lines
// and inlined calls from the program's DWARF: the limit counts
// addresses, each of which prints as its inlined calls and its function.
func TestStackFormats(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "stacks", map[string]string{"stacks.c": stacksProgram}, "-g", "-O1", "-fno-omit-frame-pointer", "-no-pie")
	// marker is a label, not a function: it is probed by address.
	marker := fmt.Sprintf("%#x", symbolAddress(t, bin, "marker"))
	src := `\S*/stacks\.c`
	tests := []struct {
		name, script string
		env          []string
		want         string // a regular expression the output matches
	}{
		{"lines and inlined calls", `uprobe:BIN:marker { print(ustack(1)); }`, nil,
			`^\n {8}\[inlined\] inner@` + src + `:6\n {8}\[inlined\] middle@` + src + `:10\n {8}outer\+\d+@` + src + `:14\n`},
		{"no debug info", `config = { show_debug_info = 0 } uprobe:BIN:marker { print(ustack(1)); }`, nil,
			`^\n {8}outer\+\d+\n+$`},
		{"perf", `uprobe:BIN:marker { print(ustack(perf, 1)); }`, nil,
			`^\n\t[0-9a-f]+ inner \(inlined\)\n\t[0-9a-f]+ middle \(inlined\)\n\t[0-9a-f]+ outer\+\d+ \(\S*/stacks\)\n+$`},
		{"raw from the environment", `uprobe:BIN:marker { print(ustack(1)); }`, []string{"BPFTRACE_STACK_MODE=raw"},
			`^\n[0-9a-f]+\n+$`},
		{"build id", `uprobe:BIN:marker { print(ustack(build_id, 2)); }`, nil,
			`^\n[0-9a-f]{40} 0x[0-9a-f]{2,}\n[0-9a-f]{40} 0x[0-9a-f]{2,}\n+$`},
		{"build id in a tuple key", `uprobe:BIN:marker { @[(1, ustack(build_id, 1))] = count(); }`, nil,
			`^\n*@\[1, \n[0-9a-f]{40} 0x[0-9a-f]+\n\]: 1\n+$`},
		{"len", `uprobe:BIN:marker { $s = ustack(2); print((len($s), len(ustack), len(ustack(1)))); }`, nil,
			`^\(2, [2-9], 1\)\n+$`},
		{"symbols by binary after the process exited", `uprobe:BIN:outer { @[ustack(1)] = count(); }`,
			[]string{"BPFTRACE_CACHE_USER_SYMBOLS=PER_PROGRAM", "BPFTRACE_SHOW_DEBUG_INFO=0"},
			`^\n*@\[\n {8}outer\+0\n\]: 1\n+$`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := strings.ReplaceAll(tc.script, "BIN:marker", bin+":"+marker)
			cmd := exec.Command(harness.Bin(), "-c", bin, "-e", strings.ReplaceAll(script, "BIN", bin))
			cmd.Env = append(os.Environ(), tc.env...)
			r := harness.RunCmd(t, cmd, 30*time.Second)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			got := harness.StripAttaching(r.Stdout)
			if !regexp.MustCompile(tc.want).MatchString(got) {
				t.Errorf("got:\n%q\nwant a match of:\n%s", got, tc.want)
			}
		})
	}
}

// symbolAddress is the address of symbol name in the binary bin.
func symbolAddress(tb testing.TB, bin, name string) uint64 {
	tb.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	tb.Fatalf("%s has no symbol %s", bin, name)
	return 0
}

package e2e

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// nofpProgram calls funcA to funcD over and over; built without frame
// pointers, only DWARF unwinding finds funcD's callers.
const nofpProgram = `#include <unistd.h>
volatile int sink;
__attribute__((noinline)) void funcD(void) { sink = 42; }
__attribute__((noinline)) void funcC(void) { funcD(); sink; }
__attribute__((noinline)) void funcB(void) { funcC(); sink; }
__attribute__((noinline)) void funcA(void) { funcB(); sink; }
int main(void) { for (;;) { funcA(); usleep(500); } }
`

// dwChain is funcD's stack as dw_ustack prints it, to main.
const dwChain = `\n {8}funcD\+0\n {8}funcC\+\d+\n {8}funcB\+\d+\n {8}funcA\+\d+\n {8}main\+\d+\n`

func buildNofp(t *testing.T) string {
	return harness.BuildC(t, "nofp", map[string]string{"nofp.c": nofpProgram},
		"-O2", "-fomit-frame-pointer", "-fasynchronous-unwind-tables", "-fno-optimize-sibling-calls")
}

// TestDwUstack runs dw_ustack on a -c child built without frame
// pointers: the whole chain of calls, as a map key too, where ustack
// stops at the probed function.
func TestDwUstack(t *testing.T) {
	testutils.RequireRoot(t)
	bin := buildNofp(t)
	const cfg = `config = { unstable_dw_ustack = enable; show_debug_info = 0 } `
	tests := []struct {
		name, script string
		args         []string
		want         string // a regular expression the output matches
	}{
		{"frames", `uprobe:BIN:funcD { printf("%s", dw_ustack()); exit(); }`, nil, `^` + dwChain},
		{"map key", `uprobe:BIN:funcD { @[dw_ustack(3)] = count(); } interval:ms:300 { exit(); }`, nil,
			`^\n*@\[\n {8}funcD\+0\n {8}funcC\+\d+\n {8}funcB\+\d+\n\]: \d+\n+$`},
		{"perf mode", `uprobe:BIN:funcD { print(dw_ustack(perf, 2)); exit(); }`, nil,
			`^\n\t[0-9a-f]+ funcD\+0 \(\S+/nofp\)\n\t[0-9a-f]+ funcC\+\d+ \(\S+/nofp\)\n`},
		{"json", `uprobe:BIN:funcD { print(dw_ustack(2)); exit(); }`, []string{"-f", "json"},
			`\{"type": "value", "data": "\\n {8}funcD\+0\\n {8}funcC\+\d+\\n"\}\n`},
		{"len, and ustack's frame-pointer gap", `uprobe:BIN:funcD { printf("%d %d\n", len(dw_ustack), len(ustack)); exit(); }`, nil,
			`^(\d+) (\d+)\n`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			script := cfg + strings.ReplaceAll(tc.script, "BIN", bin)
			args := append([]string{"-c", bin, "-e", script}, tc.args...)
			r := harness.RunCmd(t, exec.Command(harness.Bin(), args...), 30*time.Second)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			got := harness.StripAttaching(r.Stdout)
			m := regexp.MustCompile(tc.want).FindStringSubmatch(got)
			if m == nil {
				t.Fatalf("got:\n%q\nwant a match of:\n%s", got, tc.want)
			}
			if len(m) == 3 && atoi(m[1]) <= atoi(m[2]) {
				t.Errorf("len(dw_ustack) %s, len(ustack) %s: want dw_ustack's longer", m[1], m[2])
			}
		})
	}
}

// TestDwUstackNoTarget checks the located error of a dw_ustack with no
// process to read unwind tables of.
func TestDwUstackNoTarget(t *testing.T) {
	testutils.RequireRoot(t)
	script := `BEGIN { print(dw_ustack()); }`
	r := harness.Gtrace(t, "-e", script)
	want := "stdin:1:15-26: ERROR: dw_ustack requires a target process. Use -p, -c, or --dwarf-pid to specify one.\n" +
		script + "\n              ~~~~~~~~~~~\n"
	if r.Code != 1 || !strings.Contains(r.Stderr, want) {
		t.Errorf("exit code %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}
}

// TestDwUstackNoDWARF traces a process whose unwind tables were not
// read, only another's (--dwarf-pid): a warning at run time.
func TestDwUstackNoDWARF(t *testing.T) {
	testutils.RequireRoot(t)
	bin := buildNofp(t)
	other := exec.Command("sleep", "60")
	traced := exec.Command(bin)
	for _, c := range []*exec.Cmd{other, traced} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
	script := `uprobe:` + bin + `:funcD { print(dw_ustack()); exit(); }`
	r := harness.RunCmd(t, exec.Command(harness.Bin(), "--dwarf-pid", strconv.Itoa(other.Process.Pid), "-e", script), 30*time.Second)
	want := "WARNING: No DWARF unwind data available for this process. Use -p or --dwarf-pid to specify target PIDs."
	if r.Code != 0 || !strings.Contains(r.Stderr, want) {
		t.Errorf("exit code %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestDwUstackPid unwinds the stack of a running process named by -p.
func TestDwUstackPid(t *testing.T) {
	testutils.RequireRoot(t)
	bin := buildNofp(t)
	traced := exec.Command(bin)
	if err := traced.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { traced.Process.Kill(); traced.Wait() })
	script := `config = { unstable_dw_ustack = enable; show_debug_info = 0 } uprobe:` + bin + `:funcD { printf("%s", dw_ustack); exit(); }`
	r := harness.RunCmd(t, exec.Command(harness.Bin(), "-p", strconv.Itoa(traced.Process.Pid), "-e", script), 30*time.Second)
	if got := harness.StripAttaching(r.Stdout); r.Code != 0 || !regexp.MustCompile(`^`+dwChain).MatchString(got) {
		t.Errorf("exit code %d, stdout:\n%q\nstderr:\n%s", r.Code, got, r.Stderr)
	}
}

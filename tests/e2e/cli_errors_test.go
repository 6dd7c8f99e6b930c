package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestCLIErrors checks errors of the command line, the environment and
// the config block: each exits 1 with its message, before anything is
// attached, and none panics.
func TestCLIErrors(t *testing.T) {
	tests := []struct {
		name   string
		env    []string
		args   []string
		stderr string // the whole of stderr, or its first line when it ends without "\n"
	}{
		{"max_strlen wraps", nil,
			[]string{"-e", `config = { max_strlen = 9223372036854775809 } BEGIN { printf("%s\n", comm); exit() }`},
			"stdin:1:12-44: ERROR: max_strlen: 9223372036854775809 is out of range: want 1 to 16384\n" +
				`config = { max_strlen = 9223372036854775809 } BEGIN { printf("%s\n", comm); exit() }` + "\n" +
				"           ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"},
		{"max_probes wraps", nil,
			[]string{"-e", "config = { max_probes = 18446744073709551615 } BEGIN { exit() }"},
			"stdin:1:12-45: ERROR: max_probes: 18446744073709551615 is out of range: want 1 to 4294967295"},
		{"max_map_keys wraps", nil,
			[]string{"-e", "config = { max_map_keys = 9223372036854775808 } BEGIN { @[1] = 1; exit() }"},
			"stdin:1:12-46: ERROR: max_map_keys: 9223372036854775808 is out of range: want 1 to 4294967295"},
		{"env max_strlen wraps", []string{"BPFTRACE_MAX_STRLEN=9223372036854775809"},
			[]string{"-e", `BEGIN { printf("%s\n", comm); exit() }`},
			"ERROR: BPFTRACE_MAX_STRLEN: 9223372036854775809 is out of range: want 1 to 16384\n"},
		{"env max_map_keys", []string{"BPFTRACE_MAX_MAP_KEYS=-1"}, []string{"-e", "BEGIN { exit() }"},
			"ERROR: BPFTRACE_MAX_MAP_KEYS: expecting a number, got -1\n"},
		{"no such pid", nil, []string{"-p", "999999", "-e", "BEGIN { exit() }"},
			"ERROR: Failed to attach to pid 999999: No such process\n"},
		{"pid not a number", nil, []string{"-p", "abc", "-e", "BEGIN { exit() }"},
			"ERROR: Failed to parse pid: invalid integer: abc\n"},
		{"pid overflows", nil, []string{"-p", "99999999999999999999", "-e", "BEGIN { exit() }"},
			"ERROR: Failed to parse pid: overflow error, maximum value is 18446744073709551615: 99999999999999999999\n"},
		{"pid out of range", nil, []string{"-p", "5000000", "-e", "BEGIN { exit() }"},
			"ERROR: Pid out of range: 5000000\n"},
		{"empty -c", nil, []string{"-c", "", "-e", "BEGIN { exit() }"},
			"ERROR: USAGE: -c needs a command to run, got an empty one"},
		{"-dd", nil, []string{"-dd", "-e", "BEGIN { exit() }"},
			"ERROR: USAGE: invalid option for -d: d (bpftrace 0.17's -dd, its most verbose debug output, is gone: -d takes a stage, one of ast, codegen, all)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testutils.RequireRoot(t)
			cmd := exec.Command(harness.Bin(), tc.args...)
			cmd.Env = append(cmd.Environ(), tc.env...)
			r := harness.RunCmd(t, cmd, 30*time.Second)
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1", r.Code)
			}
			got := r.Stderr
			if !strings.HasSuffix(tc.stderr, "\n") {
				got, _, _ = strings.Cut(got, "\n")
			}
			if got != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, tc.stderr)
			}
			if r.Stdout != "" {
				t.Errorf("stdout %q, want none: nothing may be attached", r.Stdout)
			}
		})
	}
}

// TestTopUnprivileged checks that gtrace top and prof, run without
// CAP_SYS_ADMIN, name the capability instead of passing on the kernel's
// "operation not permitted": CAP_BPF and CAP_PERFMON are not enough to
// list every BPF program.
func TestTopUnprivileged(t *testing.T) {
	testutils.RequireRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed to drop capabilities: %v", err)
	}
	for _, drop := range []string{"-sys_admin", "-all"} {
		for _, args := range [][]string{{"top", "--once"}, {"top", "--once", "-f", "json"}, {"prof", "-d", "1s", "1"}} {
			cmd := exec.Command(setpriv, append([]string{"--bounding-set=" + drop, "--inh-caps=" + drop, harness.Bin()}, args...)...)
			r := harness.RunCmd(t, cmd, 30*time.Second)
			const want = "ERROR: missing CAP_SYS_ADMIN capability: "
			if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) || strings.Contains(r.Stderr, "not permitted") {
				t.Errorf("gtrace %q with capabilities %s: exit %d, stderr %q; want 1 and %q", args, drop, r.Code, r.Stderr, want+"...")
			}
		}
	}
}

// TestListUnprivileged checks that gtrace -l run by a user who may not
// read tracefs says why the kernel refused.
func TestListUnprivileged(t *testing.T) {
	testutils.RequireRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed to change user: %v", err)
	}
	if fi, err := os.Stat("/sys/kernel/tracing"); err != nil || fi.Mode().Perm()&0o005 != 0 {
		testutils.Skip(t, fmt.Sprintf("tracefs is readable by others here (%v): nothing is refused", err))
	}
	// nobody must be able to run the binary: copy it out of the 0700
	// build directory.
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "gtrace")
	b, err := os.ReadFile(harness.Bin())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-l", "tracepoint:sched:*")
	r := harness.RunCmd(t, cmd, 30*time.Second)
	const want = "permission denied: listing probes reads tracefs, which only root may read here\n"
	if r.Code != 1 || !strings.HasSuffix(r.Stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 and an error ending %q", r.Code, r.Stderr, want)
	}
}

package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
)

// bin is the binary built by Main.
var bin string

// Main builds gtrace into a temporary directory, runs the tests and
// exits with their status. A package's TestMain calls it.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "gtrace-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "gtrace")
	// Built as the README builds it: static, without cgo, which would
	// link libc for the net package.
	build := exec.Command("go", "build", "-o", bin, "gtrace/cmd/gtrace")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building gtrace:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Bin returns the path of the gtrace binary built by Main.
func Bin() string {
	return bin
}

// RequireBpftrace returns the path of the reference bpftrace binary, or
// skips tb (failing it under CI) when there is none in PATH.
func RequireBpftrace(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("bpftrace")
	if err != nil {
		testutils.Skip(tb, "needs bpftrace in PATH for differential comparison")
	}
	return path
}

// Result is what one run of a tracer produced.
type Result struct {
	Stdout, Stderr string
	Code           int // the exit code, -1 after a signal or the timeout
	Elapsed        time.Duration
}

// Gtrace runs the gtrace binary built by Main with args.
func Gtrace(tb testing.TB, args ...string) Result {
	tb.Helper()
	return Run(tb, bin, args...)
}

// Run runs the tracer bin with args and a timeout of 30 s, so that a
// hung tracer fails the test instead of the whole package.
func Run(tb testing.TB, bin string, args ...string) Result {
	tb.Helper()
	return RunTimeout(tb, 30*time.Second, bin, args...)
}

// RunTimeout is Run with a chosen timeout.
func RunTimeout(tb testing.TB, timeout time.Duration, bin string, args ...string) Result {
	tb.Helper()
	return RunCmd(tb, exec.Command(bin, args...), timeout)
}

// RunCmd runs cmd, whose stdout and stderr it sets, and returns what it
// printed. Past timeout, it kills cmd and fails tb. It fails tb, too, on
// a Go panic in stderr.
func RunCmd(tb testing.TB, cmd *exec.Cmd, timeout time.Duration) Result {
	tb.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("running %s: %v", cmd.Path, err)
	}
	timer := time.AfterFunc(timeout, func() { cmd.Process.Kill() })
	cmd.Wait()
	timedOut := !timer.Stop()
	r := Result{
		Stdout:  stdout.String(),
		Stderr:  stderr.String(),
		Code:    cmd.ProcessState.ExitCode(),
		Elapsed: time.Since(start),
	}
	if timedOut {
		tb.Errorf("%s %q timed out after %v\nstdout:\n%s\nstderr:\n%s", cmd.Path, cmd.Args[1:], timeout, r.Stdout, r.Stderr)
	}
	CheckNoPanic(tb, r.Stderr)
	return r
}

// CheckNoPanic fails tb on a Go panic or runtime crash in stderr.
func CheckNoPanic(tb testing.TB, stderr string) {
	tb.Helper()
	if strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		tb.Errorf("Go panic in stderr:\n%s", stderr)
	}
}

// WriteScript writes an executable shell script into a temporary
// directory of tb and returns its path.
func WriteScript(tb testing.TB, name, body string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

// DD returns a -c command for dd copying /dev/zero to /dev/null with
// status=none, so its only data reads are on fd 0 and writes on fd 1.
// The full path matters: bpftrace refuses a bare "dd" that matches both
// /bin/dd and /usr/bin/dd on merged-/usr systems.
func DD(opts string) string {
	return "/usr/bin/dd if=/dev/zero of=/dev/null status=none " + opts
}

// DDOneByte is a -c command for dd that makes 37 reads of 1 byte and 37
// writes of 1 byte.
var DDOneByte = DD("bs=1 count=37")

// ReadsFd0 is the probe on the -c command's reads from fd 0.
const ReadsFd0 = "tracepoint:syscalls:sys_enter_read /pid == cpid && args.fd == 0/"

// StatsSysctlKept reads kernel.bpf_stats_enabled and checks, when the
// test ends, that what it runs (what) left the sysctl as it was: BPF
// statistics go on through a BPF_ENABLE_STATS descriptor only.
func StatsSysctlKept(tb testing.TB, what string) {
	tb.Helper()
	const sysctl = "/proc/sys/kernel/bpf_stats_enabled"
	before, err := os.ReadFile(sysctl)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		after, err := os.ReadFile(sysctl)
		if err != nil {
			tb.Error(err)
		} else if string(after) != string(before) {
			tb.Errorf("bpf_stats_enabled was %q, is %q after %s", before, after, what)
		}
	})
}

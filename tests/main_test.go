// Package tests holds end-to-end tests that run the gtrace binary, and
// differential tests that compare it with the system's bpftrace.
package tests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gtraceBin is the binary built once by TestMain.
var gtraceBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gtrace-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gtraceBin = filepath.Join(dir, "gtrace")
	build := exec.Command("go", "build", "-o", gtraceBin, "gtrace/cmd/gtrace")
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

// requireRoot skips tests that need root, except under CI=true where a
// skipped test would hide missing coverage.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("test needs root; skipping is not allowed when CI=true")
	}
	t.Skip("test needs root to load BPF programs")
}

// requireBpftrace is requireRoot for the reference bpftrace binary.
func requireBpftrace(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("bpftrace")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("test needs bpftrace in PATH; skipping is not allowed when CI=true")
	}
	t.Skip("test needs bpftrace in PATH for differential comparison")
	return ""
}

// result is what one run of a tracer produced.
type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// runTracer runs bin with args and a timeout, so that a hung tracer fails
// the test instead of the whole package.
func runTracer(t *testing.T, bin string, args ...string) result {
	t.Helper()
	return runTimeout(t, 30*time.Second, bin, args...)
}

// runTimeout is runTracer with a chosen timeout.
func runTimeout(t *testing.T, timeout time.Duration, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Errorf("%s %q timed out after %v\nstdout:\n%s\nstderr:\n%s", bin, args, timeout, r.stdout, r.stderr)
		r.code = -1
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", bin, err)
	}
	checkNoPanic(t, r)
	return r
}

// gtrace runs the built gtrace binary.
func gtrace(t *testing.T, args ...string) result {
	t.Helper()
	return runTracer(t, gtraceBin, args...)
}

// checkNoPanic fails on a Go panic or runtime crash, whatever the exit code.
func checkNoPanic(t *testing.T, r result) {
	t.Helper()
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("Go panic in stderr:\n%s", r.stderr)
	}
}

// attachingLine is the "Attaching N probes..." line that gtrace, like
// bpftrace 0.17, prints on stdout before the program's output.
var attachingLine = regexp.MustCompile(`(?m)^Attaching \d+ probes?\.\.\.\n`)

// stripAttaching removes the attaching line, which is not program output.
func stripAttaching(stdout string) string {
	return attachingLine.ReplaceAllString(stdout, "")
}

// mapOutput is stdout without the attaching line and the blank lines
// printed before the maps at exit and after the last histogram, so
// expectations can list just the lines that carry values.
func mapOutput(stdout string) string {
	s := strings.Trim(stripAttaching(stdout), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

// histRow formats one histogram row the way bpftrace does: a 16-wide
// label, an 8-wide count and a 52-wide bar scaled to the largest count.
func histRow(label string, count, max int) string {
	bar := strings.Repeat("@", int(float32(count)/float32(max)*52))
	return fmt.Sprintf("%-16s%8d |%-52s|\n", label, count, bar)
}

// writeScript writes an executable shell script into a test temp dir.
func writeScript(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// dd returns a -c command for dd copying /dev/zero to /dev/null with
// status=none, so its only data reads are on fd 0 and writes on fd 1.
// The full path matters: bpftrace refuses a bare "dd" that matches both
// /bin/dd and /usr/bin/dd on merged-/usr systems.
func dd(opts string) string {
	return "/usr/bin/dd if=/dev/zero of=/dev/null status=none " + opts
}

// scriptCase is a script that needs no workload and what it prints.
type scriptCase struct{ name, script, want string }

// runScripts runs each script with -e and compares its output, without
// the attaching line and the blank lines around the maps.
func runScripts(t *testing.T, tests []scriptCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := gtrace(t, "-e", tc.script)
			if r.code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
			}
			if got := mapOutput(r.stdout); got != tc.want {
				t.Errorf("script: %s\ngot:\n%q\nwant:\n%q", tc.script, got, tc.want)
			}
		})
	}
}

// statsSysctlKept reads kernel.bpf_stats_enabled and checks, when the
// test ends, that what it runs (what) left the sysctl as it was: BPF
// statistics go on through a BPF_ENABLE_STATS descriptor only.
func statsSysctlKept(t *testing.T, what string) {
	t.Helper()
	const sysctl = "/proc/sys/kernel/bpf_stats_enabled"
	before, err := os.ReadFile(sysctl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		after, err := os.ReadFile(sysctl)
		if err != nil {
			t.Error(err)
		} else if string(after) != string(before) {
			t.Errorf("bpf_stats_enabled was %q, is %q after %s", before, after, what)
		}
	})
}

// startTracing runs gtrace on script in the background until the test
// ends or stops it, and returns once every probe is attached: with -v,
// gtrace says so on stderr. Its output goes to stdout; the rest of
// stderr is dropped.
func startTracing(t *testing.T, script string, stdout io.Writer) *exec.Cmd {
	t.Helper()
	tracer := exec.Command(gtraceBin, "-v", "-e", script)
	tracer.Stdout = stdout
	errs, err := tracer.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tracer.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tracer.Process.Signal(syscall.SIGINT)
		tracer.Wait()
	})
	lines := bufio.NewScanner(errs)
	var said strings.Builder
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "attached ") {
		said.WriteString(lines.Text() + "\n")
	}
	if !strings.HasPrefix(lines.Text(), "attached ") {
		t.Fatalf("tracer did not attach, stderr:\n%s", said.String())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return tracer
}

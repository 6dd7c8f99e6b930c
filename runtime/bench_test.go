package runtime

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// runBench runs src in bench mode and returns its output, its stderr and
// its exit code.
func runBench(t *testing.T, src string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code, err := Run(compile(t, src), &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Bench: true})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String(), stderr.String(), code
}

// TestBench runs BEGIN, the benchmarks in order, whose output is
// dropped, and END; maps are not printed at exit.
func TestBench(t *testing.T) {
	testutils.RequireRoot(t)
	out, stderr, code := runBench(t, `begin { printf("begin\n"); } bench:count { @c = count(); }
		bench:loop { $a = 0; for ($i : 0..10) { $a++; } printf("dropped\n"); } end { printf("end %d\n", @c > 1000); }`)
	want := regexp.MustCompile(`^begin
Benchmark {32}Time\(ns\) {7}Iterations
-{66}
count {36}\d+ +\d+
loop {37}\d+ +\d+
end 1
$`)
	if code != 0 || stderr != "" || !want.MatchString(out) {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
}

// TestBenchFailure checks that a benchmark exiting with a non-zero code
// fails the run, after the others ran.
func TestBenchFailure(t *testing.T) {
	testutils.RequireRoot(t)
	out, stderr, code := runBench(t, `bench:bad { exit(3); } bench:good { @x = 1; }`)
	if code != 1 || stderr != "ERROR: Benchmark 'bad' failed.\n" || !strings.HasPrefix(out, "Benchmark ") || !strings.Contains(out, "\ngood ") || strings.Contains(out, "bad") {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
}

// TestBenchOnly checks that bench probes alone do not run without bench
// mode.
func TestBenchOnly(t *testing.T) {
	var stdout bytes.Buffer
	_, err := Run(compile(t, `bench:a { @x = 1; }`), &Options{Printer: output.NewText(&stdout, &stdout), Stderr: &stdout})
	if !errors.Is(err, errBenchOnly) {
		t.Errorf("error %v, want %v", err, errBenchOnly)
	}
}

// TestBenchSkipped checks that a benchmark returning non-zero is left
// out of the results, without failing the run.
func TestBenchSkipped(t *testing.T) {
	testutils.RequireRoot(t)
	out, stderr, code := runBench(t, `bench:skipped { return 1; } bench:kept { @x = 1; }`)
	if code != 0 || stderr != "" || strings.Contains(out, "skipped") || !strings.Contains(out, "\nkept ") {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
}

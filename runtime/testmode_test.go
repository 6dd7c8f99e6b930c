package runtime

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// runTests runs src in test mode with printer p, and returns its stderr
// and exit code.
func runTests(t *testing.T, src string, p output.Printer, stderr *bytes.Buffer) int {
	t.Helper()
	code, err := Run(compile(t, src), &Options{Printer: p, Stderr: stderr, Test: true})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return code
}

// TestTestMode runs BEGIN, each test once in order, and END: a test
// fails on a non-zero return, an exit code, an errorf() or a runtime
// error, and only a failed test's output is shown.
func TestTestMode(t *testing.T) {
	testutils.RequireRoot(t)
	var out, stderr bytes.Buffer
	code := runTests(t, `begin { printf("begin\n"); }
test:quiet { printf("hidden\n"); @m[1] = 2; }
test:returns { printf("shown\n"); if (@m[1] == 2) { return 7; } }
test:exits { exit(2); }
test:exit_zero { exit(); }
test:errs { errorf("broken %d", 3); }
test:divides { $z = 0; @d = 1 / $z; }
test:early { return 0; printf("never\n"); }
end { printf("end %d\n", @m[1]); }`, output.NewText(&out, &stderr), &stderr)
	ok, failed := `\x1b\[32m\[       OK \]\x1b\[0m`, `\x1b\[31m\[  FAILED  \]\x1b\[0m`
	d := ` \(\d+ (ns|us|ms)\)\n`
	want := regexp.MustCompile(`^begin
.*Running 7 tests.
.*quiet
` + ok + ` quiet` + d + `.*returns
shown
` + failed + ` returns` + d + `.*exits
` + failed + ` exits` + d + `.*exit_zero
` + ok + ` exit_zero` + d + `.*errs
stdin:6:13-35: ERROR: broken 3
` + failed + ` errs` + d + `.*divides
stdin:7:29-35: WARNING: Divide or modulo by 0 detected.*
.*
 +~+
` + failed + ` divides` + d + `.*early
` + ok + ` early` + d + `.* 7 tests ran.
.* 3 tests.
` + failed + ` 4 tests, listed below:
` + failed + ` returns
` + failed + ` exits
` + failed + ` errs
` + failed + ` divides
end 2
$`)
	if code != 1 || stderr.String() != "" || !want.MatchString(out.String()) {
		t.Errorf("exit %d, stderr %q, output:\n%q", code, stderr.String(), out.String())
	}
}

// TestTestModeJSON checks the test_result records, which hold the
// captured output as text, and a run whose tests all pass.
func TestTestModeJSON(t *testing.T) {
	testutils.RequireRoot(t)
	var out, stderr bytes.Buffer
	code := runTests(t, `test:a { printf("x\n"); } test:b { $x = 1; }`, output.NewJSON(&out), &stderr)
	want := regexp.MustCompile(`^\{"type": "test_result", "data": \{"a": \{"duration": \d+, "passed": true, "output": "x\\n"\}\}\}
\{"type": "test_result", "data": \{"b": \{"duration": \d+, "passed": true, "output": ""\}\}\}
$`)
	if code != 0 || stderr.String() != "" || !want.MatchString(out.String()) {
		t.Errorf("exit %d, stderr %q, output:\n%s", code, stderr.String(), out.String())
	}
}

// TestNothingRuns checks bpftrace's errors for probes the mode does not
// run.
func TestNothingRuns(t *testing.T) {
	tests := []struct {
		src         string
		test, bench bool
		want        error
	}{
		{src: `test:a {}`, want: errTestOnly},
		{src: `test:a {} bench:b {}`, want: errTestOnly},
		{src: `test:a {}`, bench: true, want: errTestOnly},
		{src: `bench:b {}`, want: errBenchOnly},
		{src: `bench:b {}`, test: true, want: errBenchOnly},
		{src: `interval:s:1 {}`, test: true, want: errNoProbes},
		{src: `begin {} test:a {}`},
		{src: `test:a {}`, test: true},
		{src: `interval:s:1 {} test:a {}`},
	}
	for _, tt := range tests {
		if got := nothingRuns(compile(t, tt.src), &Options{Test: tt.test, Bench: tt.bench}); got != tt.want && !errors.Is(got, tt.want) {
			t.Errorf("%s (test %v, bench %v): %v, want %v", tt.src, tt.test, tt.bench, got, tt.want)
		}
	}
}

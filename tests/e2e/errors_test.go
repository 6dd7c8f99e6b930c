package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// errorHeader is the first line of a located diagnostic, as in
// "stdin:1:14-15: ERROR: syntax error, unexpected ;".
var errorHeader = regexp.MustCompile(`^(stdin|[^:]+\.bt):\d+:\d+-\d+: ERROR: `)

// TestSyntaxErrorFormat checks the exact diagnostic layout: location,
// message, source line and a ~ underline under the bad token.
func TestSyntaxErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"stdin", []string{"-e", "BEGIN { @x = ; }"},
			"stdin:1:14-15: ERROR: syntax error, unexpected ;\n" +
				"BEGIN { @x = ; }\n" +
				"             ~\n"},
		{"file", []string{"../testdata/syntax_error.bt"},
			"../testdata/syntax_error.bt:4:7-8: ERROR: syntax error, unexpected ;\n" +
				"    @x = ;\n" +
				"         ~\n"},
		{"stray brace", []string{"-e", "{"},
			"stdin:1:1-2: ERROR: syntax error, unexpected {\n" +
				"{\n" +
				"~\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, tc.args...)
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1", r.Code)
			}
			if r.Stderr != tc.want {
				t.Errorf("stderr:\n%q\nwant:\n%q", r.Stderr, tc.want)
			}
			if r.Stdout != "" {
				t.Errorf("stdout should be empty, got %q", r.Stdout)
			}
		})
	}
}

// TestCompileErrors checks that bad programs fail with exit 1 and a located
// diagnostic carrying the expected message, before anything is attached.
func TestCompileErrors(t *testing.T) {
	tests := []struct{ name, script, msg string }{
		{"unknown function", "BEGIN { foo(1) }", "ERROR: Unknown function: foo"},
		{"type mismatch binop", `BEGIN { @x = "a" + 1 }`, "ERROR: Type mismatch for '+': comparing 'string[2]' with 'int8'"},
		{"type mismatch variable", `BEGIN { $a = 1; $a = "s"; }`, "ERROR: Type mismatch for $a"},
		{"type mismatch map", `BEGIN { @x = 1; @x = "s"; }`, "ERROR: Type mismatch for @x"},
		{"map key mismatch", "BEGIN { @[1, 2] = 1; @[1] = 2; }", "ERROR: Argument mismatch for @"},
		{"unsafe system", `BEGIN { system("ls") }`, "ERROR: system() is an unsafe function being used in safe mode"},
		{"unknown probe type", "foo:bar { }", "ERROR: invalid probe type: foo"},
		{"unknown field", "tracepoint:syscalls:sys_enter_read { @ = args.nosuch; }", "ERROR: Can't find a field nosuch in tracepoint:syscalls:sys_enter_read"},
		{"too many args", "BEGIN { @ = count(1, 2, 3) }", "ERROR: count() requires"},
		{"printf format", `BEGIN { printf("%d %d\n", 1) }`, "ERROR: printf: Not enough arguments for format string"},
		{"printf not literal", "BEGIN { printf(1) }", "ERROR: printf() expects a string literal"},
		{"exit string", `BEGIN { exit("a") }`, "ERROR: "},
		{"lhist bounds", "BEGIN { @ = lhist(1, 10, 0, 1) }", "ERROR: lhist: max must be greater than min"},
		{"interval zero", "interval:ms:0 { exit() }", "ERROR: "},
		{"profile zero", "profile:hz:0 { exit() }", "ERROR: "},
		{"unterminated string", `BEGIN { "abc }`, "ERROR: "},
		{"missing brace", "BEGIN", "ERROR: syntax error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "-e", tc.script)
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", r.Code, r.Stderr)
			}
			if !errorHeader.MatchString(r.Stderr) {
				t.Errorf("stderr does not start with a located ERROR:\n%s", r.Stderr)
			}
			if !strings.Contains(r.Stderr, tc.msg) {
				t.Errorf("stderr lacks %q:\n%s", tc.msg, r.Stderr)
			}
			if r.Stdout != "" {
				t.Errorf("program ran despite the error:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
			}
		})
	}
}

// TestSingleDiagnostic checks that one mistake gives one error, as in
// bpftrace, not follow-on errors about the map being assigned.
func TestSingleDiagnostic(t *testing.T) {
	for _, script := range []string{
		"BEGIN { @ = count(1, 2, 3) }",
		"BEGIN { @ = hist(); }",
		`BEGIN { @x = "a" + 1 }`,
		"tracepoint:syscalls:sys_enter_read { @ = args.nosuch; }",
	} {
		t.Run(script, func(t *testing.T) {
			r := harness.Gtrace(t, "-e", script)
			if n := strings.Count(r.Stderr, "ERROR:"); n != 1 || r.Code != 1 {
				t.Errorf("exit %d with %d errors, want exit 1 with 1 error:\n%s", r.Code, n, r.Stderr)
			}
		})
	}
}

func TestUnsafe(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "--unsafe", "-e", `BEGIN { system("echo from-system"); exit(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if !strings.HasPrefix(harness.StripAttaching(r.Stdout), "from-system\n") {
		t.Errorf("system() output missing, stdout:\n%q", r.Stdout)
	}
}

// TestAttachErrors covers probes that parse but cannot exist here.
func TestAttachErrors(t *testing.T) {
	testutils.RequireRoot(t)

	// This VM has no PMU: the error must say so, not crash or hang.
	r := harness.Gtrace(t, "-e", "hardware:cycles:1000 { @ = count(); }")
	if r.Code != 1 {
		t.Errorf("hardware: exit code %d, want 1", r.Code)
	}
	if !strings.Contains(r.Stderr, "ERROR:") || !strings.Contains(r.Stderr, "hardware:cycles") {
		t.Errorf("hardware: want an ERROR naming hardware:cycles, got:\n%s", r.Stderr)
	}

	// bpftrace rejects an unknown tracepoint while compiling, with its
	// location: "stdin:1:1-24: ERROR: No matches for tracepoint nosuch:thing.".
	for _, args := range [][]string{
		{"-e", "tracepoint:nosuch:thing { @ = count(); }"},
		{"--dry-run", "-e", "tracepoint:nosuch:thing { @ = count(); }"},
		{"-e", "tracepoint:syscalls:sys_enter_nosuch { @ = count(); }"},
	} {
		r := harness.Gtrace(t, args...)
		if r.Code != 1 {
			t.Errorf("%q: exit code %d, want 1", args, r.Code)
		}
		if !errorHeader.MatchString(r.Stderr) || !strings.Contains(r.Stderr, "No matches for tracepoint") {
			t.Errorf("%q: want a located 'No matches for tracepoint' error, got:\n%s", args, r.Stderr)
		}
		if strings.Contains(r.Stdout+r.Stderr, "Attached") {
			t.Errorf("%q: error came only at attach time:\n%s", args, r.Stderr)
		}
	}
}

// TestUsageErrors covers command lines without a usable program. They must
// fail at once, so the timeout is short.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-e", ""},
		{"--no-such-option", "-e", "BEGIN { exit(); }"},
		{"../testdata/does-not-exist.bt"},
	} {
		r := harness.RunTimeout(t, 5*time.Second, harness.Bin(), args...)
		if r.Code != 1 {
			t.Errorf("%q: exit code %d, want 1; stderr:\n%s", args, r.Code, r.Stderr)
		}
		if r.Stderr == "" {
			t.Errorf("%q: no message on stderr", args)
		}
	}
}

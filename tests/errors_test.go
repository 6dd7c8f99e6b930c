package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"
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
		{"file", []string{"testdata/syntax_error.bt"},
			"testdata/syntax_error.bt:4:7-8: ERROR: syntax error, unexpected ;\n" +
				"    @x = ;\n" +
				"         ~\n"},
		{"stray brace", []string{"-e", "{"},
			"stdin:1:1-2: ERROR: syntax error, unexpected {\n" +
				"{\n" +
				"~\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := gtrace(t, tc.args...)
			if r.code != 1 {
				t.Errorf("exit code %d, want 1", r.code)
			}
			if r.stderr != tc.want {
				t.Errorf("stderr:\n%q\nwant:\n%q", r.stderr, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout should be empty, got %q", r.stdout)
			}
		})
	}
}

// TestCompileErrors checks that bad programs fail with exit 1 and a located
// diagnostic carrying the expected message, before anything is attached.
func TestCompileErrors(t *testing.T) {
	tests := []struct{ name, script, msg string }{
		{"unknown function", "BEGIN { foo(1) }", "ERROR: Unknown function: foo"},
		{"type mismatch binop", `BEGIN { @x = "a" + 1 }`, "ERROR: Type mismatch for '+': comparing 'string[2]' with 'int64'"},
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
			r := gtrace(t, "-e", tc.script)
			if r.code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", r.code, r.stderr)
			}
			if !errorHeader.MatchString(r.stderr) {
				t.Errorf("stderr does not start with a located ERROR:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("stderr lacks %q:\n%s", tc.msg, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("program ran despite the error:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
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
			r := gtrace(t, "-e", script)
			if n := strings.Count(r.stderr, "ERROR:"); n != 1 || r.code != 1 {
				t.Errorf("exit %d with %d errors, want exit 1 with 1 error:\n%s", r.code, n, r.stderr)
			}
		})
	}
}

func TestUnsafe(t *testing.T) {
	requireRoot(t)
	r := gtrace(t, "--unsafe", "-e", `BEGIN { system("echo from-system"); exit(); }`)
	if r.code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.HasPrefix(stripAttaching(r.stdout), "from-system\n") {
		t.Errorf("system() output missing, stdout:\n%q", r.stdout)
	}
}

// TestAttachErrors covers probes that parse but cannot exist here.
func TestAttachErrors(t *testing.T) {
	requireRoot(t)

	// This VM has no PMU: the error must say so, not crash or hang.
	r := gtrace(t, "-e", "hardware:cycles:1000 { @ = count(); }")
	if r.code != 1 {
		t.Errorf("hardware: exit code %d, want 1", r.code)
	}
	if !strings.Contains(r.stderr, "ERROR:") || !strings.Contains(r.stderr, "hardware:cycles") {
		t.Errorf("hardware: want an ERROR naming hardware:cycles, got:\n%s", r.stderr)
	}

	// bpftrace rejects an unknown tracepoint while compiling, with its
	// location: "stdin:1:1-24: ERROR: tracepoint not found: nosuch:thing".
	for _, args := range [][]string{
		{"-e", "tracepoint:nosuch:thing { @ = count(); }"},
		{"--dry-run", "-e", "tracepoint:nosuch:thing { @ = count(); }"},
		{"-e", "tracepoint:syscalls:sys_enter_nosuch { @ = count(); }"},
	} {
		r := gtrace(t, args...)
		if r.code != 1 {
			t.Errorf("%q: exit code %d, want 1", args, r.code)
		}
		if !errorHeader.MatchString(r.stderr) || !strings.Contains(r.stderr, "tracepoint not found") {
			t.Errorf("%q: want a located 'tracepoint not found' error, got:\n%s", args, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "Attaching") {
			t.Errorf("%q: error came only at attach time:\n%s", args, r.stderr)
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
		{"testdata/does-not-exist.bt"},
	} {
		r := runTimeout(t, 5*time.Second, gtraceBin, args...)
		if r.code != 1 {
			t.Errorf("%q: exit code %d, want 1; stderr:\n%s", args, r.code, r.stderr)
		}
		if r.stderr == "" {
			t.Errorf("%q: no message on stderr", args)
		}
	}
}

package e2e

import (
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestCppMacros runs a script that takes its constants from #define, a
// header's table and an #ifdef branch, and uses a function-like macro in
// a probe body.
func TestCppMacros(t *testing.T) {
	testutils.RequireRoot(t)
	script := `#include <linux/sched.h>
#define ANSWER 42
#define SQUARE(x) ((x) * (x))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#ifdef BPFTRACE_HAVE_BTF
#define MODE "btf"
#else
#define MODE "no btf"
#endif

BEGIN
{
	printf("%d %d %d %s %d\n", ANSWER, SQUARE(ANSWER + 1),
	    MAX(SQUARE(2), 3), MODE, TASK_INTERRUPTIBLE);
	exit();
}
`
	r := harness.Gtrace(t, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got, want := harness.MapOutput(r.Stdout), "42 1849 4 btf 1\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

// TestCppErrors checks that errors from the preprocessor, and from later
// stages after an expansion, point at the script as written.
func TestCppErrors(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"unterminated #if", "#if 1\nBEGIN { }",
			"stdin:1:1-4: ERROR: unterminated #if\n#if 1\n~~~\n"},
		{"wrong argument count", "#define SQUARE(x) ((x) * (x))\nBEGIN { @x = SQUARE(1, 2); }",
			"stdin:2:14-26: ERROR: macro 'SQUARE' takes 1 argument, but 2 were given\n" +
				"BEGIN { @x = SQUARE(1, 2); }\n" +
				"             ~~~~~~~~~~~~\n"},
		{"syntax error after an expansion", "#define SQUARE(x) ((x) * (x))\nBEGIN { @x = SQUARE(2); @y = ; }",
			"stdin:2:30-31: ERROR: syntax error, unexpected ;\n" +
				"BEGIN { @x = SQUARE(2); @y = ; }\n" +
				"                             ~\n"},
		{"constant without its header", "#define SQUARE(x) ((x) * (x))\nBEGIN { @x = SQUARE(2) + TASK_RUNNING; }",
			"stdin:2:26-38: ERROR: Unknown identifier: 'TASK_RUNNING'; if it is a constant from a C header, " +
				"add `#define TASK_RUNNING value` to the script\n" +
				"BEGIN { @x = SQUARE(2) + TASK_RUNNING; }\n" +
				"                         ~~~~~~~~~~~~\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "-e", tc.script)
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1", r.Code)
			}
			if r.Stderr != tc.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, tc.want)
			}
		})
	}
}

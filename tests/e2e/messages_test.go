package e2e

import (
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestNoWarnings checks that --no-warnings silences the checker's
// warnings and warnf(), and leaves errorf() and the output alone.
func TestNoWarnings(t *testing.T) {
	testutils.RequireRoot(t)
	script := `BEGIN { debugf("x"); warnf("a warning %d", 1); errorf("an error %d", 2); printf("out\n"); }`
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"warnings", nil, "stdin:1:9-20: WARNING: The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).\n" +
			script + "\n" +
			"        ~~~~~~~~~~~\n" +
			"stdin:1:22-46: WARNING: a warning 1\n" +
			"stdin:1:48-72: ERROR: an error 2\n"},
		{"no warnings", []string{"--no-warnings"}, "stdin:1:48-72: ERROR: an error 2\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, append([]string{"-q", "-e", script}, tc.args...)...)
			if r.Code != 0 || strings.TrimSpace(r.Stdout) != "out" {
				t.Errorf("exit %d, stdout %q", r.Code, r.Stdout)
			}
			if r.Stderr != tc.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, tc.stderr)
			}
		})
	}
}

// TestWriteUserUnsafe checks that write_user() needs --unsafe.
func TestWriteUserUnsafe(t *testing.T) {
	r := harness.Gtrace(t, "--dry-run", "-e", `tracepoint:syscalls:sys_enter_openat { $ok = write_user(args.filename, "x", 1); }`)
	want := "stdin:1:46-79: ERROR: write_user() is unsafe. To use you need the --unsafe flag\n"
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}
}

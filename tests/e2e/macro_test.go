package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestMacroErrors checks the layout of errors in expanded macros: the
// error in the body, then each call it was expanded from.
func TestMacroErrors(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"expanded from",
			`macro set($x) { $x = 1; } BEGIN { $a = "string"; set($a); }`,
			"stdin:1:17-23: ERROR: Type mismatch for $a: trying to assign value of type 'int8' when variable already contains a value of type 'string[7]'\n" +
				`macro set($x) { $x = 1; } BEGIN { $a = "string"; set($a); }` + "\n" +
				"                ~~~~~~\n" +
				"stdin:1:50-57: ERROR: expanded from\n" +
				`macro set($x) { $x = 1; } BEGIN { $a = "string"; set($a); }` + "\n" +
				"                                                 ~~~~~~~\n"},
		{"closest definition",
			`macro set($x) { $x } BEGIN { set(1, 2); }`,
			"stdin:1:30-39: ERROR: Call to set() has arguments that do not match any definition.\n" +
				"macro set($x) { $x } BEGIN { set(1, 2); }\n" +
				"                             ~~~~~~~~~\n" +
				"stdin:1:1-10: ERROR: The closest definition of set() has a different number of arguments. Expected: 1 but got 2\n" +
				"macro set($x) { $x } BEGIN { set(1, 2); }\n" +
				"~~~~~~~~~\n"},
		{"no value",
			`BEGIN { $x = { $a = 1; }; }`,
			"stdin:1:9-25: ERROR: Invalid expression for assignment\n" +
				"BEGIN { $x = { $a = 1; }; }\n" +
				"        ~~~~~~~~~~~~~~~~\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "--dry-run", "-e", tc.script)
			if r.Code != 1 || r.Stderr != tc.want {
				t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, tc.want)
			}
		})
	}
}

// macroTool counts system calls by process the way bpftrace's tools use
// macros: a map passed by reference, a name parameter, a bare call.
const macroTool = `#!/usr/bin/env gtrace
macro top() { 5 }
macro tally(@counts, key) { @counts[key] = count(); }
macro report(title, @counts) {
  printf("%s\n", title);
  print(@counts, top);
  clear(@counts);
}
tracepoint:raw_syscalls:sys_enter { tally(@calls, comm); }
interval:ms:200 { report("Top processes:", @calls); exit(); }
`

// TestMacroTool runs a tool written with macros, and prints its tree
// with the macros expanded.
func TestMacroTool(t *testing.T) {
	testutils.RequireRoot(t)
	path := filepath.Join(t.TempDir(), "tally.bt")
	if err := os.WriteFile(path, []byte(macroTool), 0o644); err != nil {
		t.Fatal(err)
	}
	r := harness.Gtrace(t, path)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Top processes:\n@calls[") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "--dry-run", "-d", "ast", path)
	if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "@calls[comm] = count();") {
		t.Errorf("exit %d, -d ast:\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

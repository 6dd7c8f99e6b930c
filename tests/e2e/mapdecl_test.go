package e2e

import (
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestMapDeclsAndLifecycle runs scripts of begin and end probes only,
// which end by themselves, with declared maps: a full hash warns of the
// updates it refused, an LRU hash evicts without a warning; a declared
// map no probe uses is warned of at its declaration.
func TestMapDeclsAndLifecycle(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, script, stdout, stderr string }{
		{"hash full", "let @a = hash(1); begin { @a[1] = 1; @a[2] = 2; }",
			"\n\n@a[1]: 1\n",
			"Attached 1 probe\nWARNING: Map full; can't update element (@a: 1 updates refused). Try increasing max_map_keys config or manually setting the max entries in a map declaration e.g. `let @a = hash(5000)`\n"},
		{"lruhash", "let @a = lruhash(1); begin { @a[1] = 1; @a[2] = 2; } end { printf(\"end\\n\"); }",
			"end\n\n\n@a[2]: 2\n", "Attached 2 probes\n"},
		{"unused", "let @a = percpuhash(1); begin { }",
			"\n\n",
			"stdin:1:1-24: WARNING: Unused map: @a\nlet @a = percpuhash(1); begin { }\n~~~~~~~~~~~~~~~~~~~~~~~\nAttached 1 probe\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := harness.Gtrace(t, "-e", tt.script)
			if res.Code != 0 || res.Stdout != tt.stdout || res.Stderr != tt.stderr {
				t.Errorf("exit %d\nstdout %q\nstderr %q\nwant stdout %q\nstderr %q", res.Code, res.Stdout, res.Stderr, tt.stdout, tt.stderr)
			}
		})
	}
}

package runtime

import (
	"testing"

	"gtrace/internal/testutils"
)

// TestLifecycle checks when a script ends by itself: one of begin and
// end probes only ends after begin, runs end and prints its maps; one
// with a probe that fires later keeps running until exit(), after which
// only end's events count.
func TestLifecycle(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name, script, want string
		code               int
	}{
		{"begin only", `BEGIN { printf("hi\n"); }`, "hi\n\n\n", 0},
		{"begin and end", `begin { printf("a\n"); } end { printf("b\n"); }`, "a\nb\n\n\n", 0},
		{"maps printed", `BEGIN { @a[1] = 2; @b = count(); } END { @c = "x"; }`, "\n\n@a[1]: 2\n@b: 1\n@c: x\n", 0},
		{"exit code", `BEGIN { exit(3); } END { printf("end\n"); }`, "end\n\n\n", 3},
		// Once exit() is handled, the events sent after it are dropped,
		// as bpftrace drops them, and end's run.
		{"events after exit dropped", `interval:ms:20 { if (nsecs > 0) { exit(); } printf("after\n"); } END { printf("end\n"); }`, "end\n\n\n", 0},
		{"interval keeps running", `BEGIN { @n = 0; } interval:ms:20 { @n++; if (@n == 3) { exit(); } }`, "\n\n@n: 3\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, code := runScript(t, tt.script)
			if got != tt.want || code != tt.code {
				t.Errorf("got %q, exit code %d; want %q, %d", got, code, tt.want, tt.code)
			}
		})
	}
}

// TestDeclaredMapsRun checks declared maps in the kernel: a full hash
// refuses new keys, an LRU hash evicts one for them.
func TestDeclaredMapsRun(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, script, want string }{
		{"hash full", `let @a = hash(1); BEGIN { @a[1] = 1; @a[2] = 2; }`, "\n\n@a[1]: 1\n"},
		{"hash update", `let @a = hash(1); BEGIN { @a = 0; @a = 1; }`, "\n\n@a: 1\n"},
		{"lruhash evicts", `let @a = lruhash(1); BEGIN { @a[1] = 1; @a[2] = 2; }`, "\n\n@a[2]: 2\n"},
		{"percpuhash full", `let @a = percpuhash(1); BEGIN { @a[1] = count(); @a[2] = count(); }`, "\n\n@a[1]: 1\n"},
		{"percpulruhash evicts", `let @a = percpulruhash(1); BEGIN { @a[1] = count(); @a[2] = count(); }`, "\n\n@a[2]: 1\n"},
		{"key-less aggregation", `let @a = percpuhash(1); BEGIN { @a = sum(4); @a = sum(5); @s = stats(2); }`, "\n\n@a: 9\n@s: { .count = 1, .average = 2, .total = 2 }\n"},
		{"hist", `let @h = percpulruhash(10); BEGIN { @h = hist(1); }`, "\n\n@h:\n[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n"},
		{"strings", `let @s = lruhash(4); BEGIN { @s["k"] = "v"; }`, "\n\n@s[k]: v\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runScript(t, tt.script)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hangLimit is far more than any of these scripts takes to fail; it only
// turns a hang into a failure.
const hangLimit = 60 * time.Second

// writeBT writes a script into a test temp dir and returns its path.
func writeBT(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestManyBlockComments checks that 80,000 block comments, which took the
// scanner quadratic time, reach the syntax error after them.
func TestManyBlockComments(t *testing.T) {
	path := writeBT(t, "comments.bt", "BEGIN { "+strings.Repeat("/* */ ", 80000)+"@x = ; }\n")
	r := runTimeout(t, hangLimit, gtraceBin, path)
	if r.code != 1 || !strings.Contains(r.stderr, "ERROR: syntax error, unexpected ;") {
		t.Errorf("exit code %d, stderr:\n%.300s", r.code, r.stderr)
	}
	t.Logf("failed in %v", r.elapsed)
}

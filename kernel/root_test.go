package kernel

import (
	"os"
	"testing"
)

// requireRoot skips tests that need root, except under CI=true where a
// skipped test would hide missing coverage.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("test needs root; skipping is not allowed when CI=true")
	}
	t.Skip("test needs root to read tracefs")
}

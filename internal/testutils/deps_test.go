package testutils

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoNet checks that the package does not import net, even
// indirectly: internal/vmtest runs its users' test binaries in guests,
// and the net package links them dynamically.
func TestNoNet(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "gtrace/internal/testutils").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if slices.Contains(strings.Fields(string(out)), "net") {
		t.Error("gtrace/internal/testutils imports net; put what needs it in internal/testnet")
	}
}

package container

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitChild waits for the child process of pid, which unshare --fork
// starts, and returns it.
func waitChild(t *testing.T, pid int) int {
	t.Helper()
	path := "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children"
	for range 500 {
		b, err := os.ReadFile(path)
		if err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				child, _ := strconv.Atoi(f[0])
				return child
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no child of %d", pid)
	return 0
}

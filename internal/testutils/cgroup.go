package testutils

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MakeCgroups makes the cgroup directories dirs, relative to the v2
// hierarchy's root, in order, and removes them when tb ends, even after
// a failure: the processes left in each are moved to the root first.
func MakeCgroups(tb testing.TB, root string, dirs ...string) {
	tb.Helper()
	for _, d := range dirs {
		dir := filepath.Join(root, d)
		if err := os.Mkdir(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
				for _, pid := range strings.Fields(string(b)) {
					os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(pid), 0o644)
				}
			}
			if err := os.Remove(dir); err != nil {
				tb.Errorf("removing cgroup: %v", err)
			}
		})
	}
}

// MoveToCgroup moves process pid into the cgroup directory dir.
func MoveToCgroup(tb testing.TB, dir string, pid int) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ChildOf waits for the first child of process pid, as the one that
// unshare --fork starts, and returns its pid.
func ChildOf(tb testing.TB, pid int) int {
	tb.Helper()
	path := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	for range 1000 {
		if b, err := os.ReadFile(path); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				child, _ := strconv.Atoi(f[0])
				return child
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	tb.Fatalf("unshare (pid %d) started no child", pid)
	return 0
}

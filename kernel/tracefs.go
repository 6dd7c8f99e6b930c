package kernel

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

const (
	tracefsPath      = "/sys/kernel/tracing"
	debugTracefsPath = "/sys/kernel/debug/tracing"
)

// TracefsDir returns the directory where tracefs is mounted. If tracefs is
// not mounted anywhere it is mounted at /sys/kernel/tracing, which is where
// bpftrace users expect it.
func TracefsDir() (string, error) {
	for _, dir := range []string{tracefsPath, debugTracefsPath} {
		if isTracefs(dir) {
			return dir, nil
		}
	}

	// The mount point is part of sysfs on every kernel that has tracefs.
	if err := unix.Mount("tracefs", tracefsPath, "tracefs", 0, ""); err != nil {
		return "", fmt.Errorf("tracefs is not mounted and mounting it at %s failed: %w", tracefsPath, err)
	}
	if !isTracefs(tracefsPath) {
		return "", fmt.Errorf("mounted tracefs at %s but it is not visible there", tracefsPath)
	}
	return tracefsPath, nil
}

// isTracefs checks the filesystem magic: an empty /sys/kernel/tracing
// directory exists even when nothing is mounted on it.
func isTracefs(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == unix.TRACEFS_MAGIC
}

// readTracefs reads a file relative to the tracefs root.
func readTracefs(name string) ([]byte, error) {
	dir, err := TracefsDir()
	if err != nil {
		return nil, err
	}
	return os.ReadFile(dir + "/" + name)
}

package symbol

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// MappedPaths lists the ELF files a live process runs: its program,
// then the files it maps, each once, as bpftrace lists them for -p. A
// process in another mount namespace sees its files under
// /proc/PID/root, which the paths then start with.
func MappedPaths(pid int) ([]string, error) {
	root := ""
	if otherMountNS(pid) {
		root = fmt.Sprintf("/proc/%d/root", pid)
	}
	var paths []string
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && !strings.HasSuffix(exe, " (deleted)") {
		paths = append(paths, root+exe)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read maps of process %d: %w", pid, err)
	}
	maps, err := parseMaps(string(data))
	if err != nil {
		return nil, fmt.Errorf("parse maps of process %d: %w", pid, err)
	}
	for _, m := range maps {
		path := root + m.path
		if !strings.HasPrefix(m.path, "/") || strings.HasSuffix(m.path, " (deleted)") || slices.Contains(paths, path) {
			continue
		}
		if isELF(path) {
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// otherMountNS reports whether process pid is in a mount namespace
// other than gtrace's.
func otherMountNS(pid int) bool {
	theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err != nil {
		return false
	}
	ours, err := os.Readlink("/proc/self/ns/mnt")
	return err == nil && theirs != ours
}

package runtime

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// macAddr formats macaddr()'s six bytes as bpftrace does.
func macAddr(b []byte) string {
	return fmt.Sprintf("%02X:%02X:%02X:%02X:%02X:%02X", b[0], b[1], b[2], b[3], b[4], b[5])
}

// cgroupRoot is one mounted cgroup hierarchy: "unified" for cgroup2,
// the mount point's last element for a cgroup v1 hierarchy.
type cgroupRoot struct{ name, dir string }

// cgroupRoots lists the mounted cgroup hierarchies: cgroup2 first, then
// cgroup v1 by name.
func cgroupRoots() []cgroupRoot {
	f, err := os.Open("/proc/mounts")
	if err != nil {
		return nil
	}
	defer f.Close()
	var v2, v1 []cgroupRoot
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		if st, err := os.Stat(fields[1]); err != nil || !st.IsDir() {
			continue
		}
		switch fields[2] {
		case "cgroup2":
			v2 = append(v2, cgroupRoot{"unified", fields[1]})
		case "cgroup":
			v1 = append(v1, cgroupRoot{filepath.Base(fields[1]), fields[1]})
		}
	}
	slices.SortFunc(v1, func(a, b cgroupRoot) int { return strings.Compare(a.name, b.name) })
	return append(v2, v1...)
}

// cgroupPath resolves cgroup_path()'s id in each hierarchy whose name
// matches filter, a pattern where * matches any text, as
// "name:/path,name:/path". A cgroup's id is its directory's inode
// number.
func cgroupPath(id uint64, filter string) string {
	var parts []string
	for _, root := range cgroupRoots() {
		if !wildcard(filter, root.name) {
			continue
		}
		if p := cgroupIn(id, root.dir); p != "" {
			parts = append(parts, root.name+":"+p)
		}
	}
	return strings.Join(parts, ",")
}

// cgroupIn finds the directory under root whose inode is id, and returns
// its path from root, "/" for root itself, or "" when there is none.
func cgroupIn(id uint64, root string) string {
	found := ""
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Ino == id {
			found = "/" + strings.TrimPrefix(strings.TrimPrefix(path, root), "/")
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// wildcard matches name against pattern, in which * stands for any text.
func wildcard(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}

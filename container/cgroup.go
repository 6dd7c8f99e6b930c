package container

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Cgroup is a cgroup v2 directory.
type Cgroup struct {
	Root string // the hierarchy's mount point
	Dir  string // its absolute path
	Path string // its path from Root, as /proc/PID/cgroup shows it: "/" for the root
	// ID is the id the kernel gives the cgroup, and BPF helpers return:
	// the directory's inode number.
	ID uint64
	// Level is its depth below the root, 0 for the root: the level at
	// which bpf_get_current_ancestor_cgroup_id finds it above a task's
	// cgroup.
	Level int
}

// V2Root returns the mount point of the cgroup v2 hierarchy, read from
// mounts, a file in the format of /proc/mounts.
func V2Root(mounts string) (string, error) {
	f, err := os.Open(mounts)
	if err != nil {
		return "", fmt.Errorf("finding the cgroup v2 hierarchy: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && fields[2] == "cgroup2" {
			return unescapeMount(fields[1]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading %s: %w", mounts, err)
	}
	return "", fmt.Errorf("no cgroup v2 hierarchy is mounted (%s has no cgroup2 line)", mounts)
}

// unescapeMount undoes the octal escapes /proc/mounts writes for a
// space, tab, newline or backslash in a mount point.
func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// Lookup finds the cgroup at path below root, the v2 hierarchy's mount
// point: path is a directory under root, or a path from root as
// /proc/PID/cgroup shows it ("/system.slice/cron.service"), or a path
// relative to root.
func Lookup(root, path string) (*Cgroup, error) {
	if path == "" {
		return nil, errors.New("empty cgroup path")
	}
	// A path from the root, as /proc/PID/cgroup shows it; else a
	// directory, which at refuses when it is no v2 cgroup.
	dir := filepath.Join(root, path)
	if filepath.IsAbs(path) && (below(root, path) || !exists(dir) && exists(path)) {
		dir = filepath.Clean(path)
	}
	return at(root, dir)
}

// below says whether path is root or a path under it.
func below(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// rootID is the id of the cgroup v2 hierarchy's root cgroup.
const rootID = 1

// at reads the cgroup at dir, below root. The filters count levels from
// the hierarchy's root, so root must be the mount of that root, not of
// a cgroup namespace's or a bind-mounted subtree, whose own root has
// another id.
func at(root, dir string) (*Cgroup, error) {
	var rst unix.Stat_t
	if err := unix.Stat(root, &rst); err != nil {
		return nil, fmt.Errorf("cgroup v2 hierarchy: %w", err)
	}
	if rst.Ino != rootID {
		return nil, fmt.Errorf("the cgroup v2 mount %s is not the hierarchy's root (its id is %d, not %d): run gtrace in the host's cgroup namespace", root, rst.Ino, rootID)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("cgroup %s: not a directory", dir)
	}
	var fsst unix.Statfs_t
	if err := unix.Statfs(dir, &fsst); err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	if fsst.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("%s is not in the cgroup v2 hierarchy (mounted at %s)", dir, root)
	}
	if !below(root, dir) {
		return nil, fmt.Errorf("%s is not below the cgroup v2 hierarchy's root %s", dir, root)
	}
	rel, _ := filepath.Rel(root, dir)
	c := &Cgroup{Root: root, Dir: dir, Path: "/", ID: st.Ino}
	if rel != "." {
		c.Path = "/" + rel
		c.Level = strings.Count(rel, "/") + 1
	}
	return c, nil
}

// FindPod finds the cgroup of the pod whose UID is uid, anywhere below
// root, as the kubelet names it with the systemd driver
// (...-pod<uid with _ for ->.slice) or the cgroupfs one (pod<uid>).
func FindPod(root, uid string) (*Cgroup, error) {
	dir, err := podDir(root, uid)
	if err != nil {
		return nil, err
	}
	return at(root, dir)
}

// podDir finds the directory of pod uid below root.
func podDir(root, uid string) (string, error) {
	if uid == "" || strings.Trim(strings.ToLower(uid), "0123456789abcdefghijklmnopqrstuvwxyz-_") != "" {
		return "", fmt.Errorf("%q is not a pod UID (such as 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)", uid)
	}
	cgroupfs := "pod" + strings.ReplaceAll(uid, "_", "-")
	systemd := "-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice"
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // a cgroup removed while walking
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); name == cgroupfs || strings.HasSuffix(name, systemd) {
			found = append(found, path)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("looking for pod %s: %w", uid, err)
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no cgroup of pod %s below %s (neither %s nor *%s)", uid, root, cgroupfs, systemd)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("pod %s has %d cgroups below %s: %s", uid, len(found), root, strings.Join(found, ", "))
}

// runtimePrefixes are the prefixes container runtimes give a container's
// scope under the systemd driver.
var runtimePrefixes = []string{"cri-containerd-", "crio-", "docker-", "containerd-"}

// ContainerID returns the container id a directory in a pod's cgroup is
// named after: cri-containerd-ID.scope, crio-ID.scope, docker-ID.scope,
// or ID alone with the cgroupfs driver. It is "" for a directory that
// is no container's, such as CRI-O's crio-conmon-ID.scope.
func ContainerID(name string) string {
	base, scope := strings.CutSuffix(name, ".scope")
	if !scope {
		if strings.ContainsAny(base, "-.") {
			return ""
		}
		return base
	}
	for _, p := range runtimePrefixes {
		if id, ok := strings.CutPrefix(base, p); ok && id != "" && !strings.Contains(id, "-") {
			return id
		}
	}
	return ""
}

// FindContainer finds the container of pod whose id starts with id.
func FindContainer(pod *Cgroup, id string) (*Cgroup, error) {
	dir, err := containerDir(pod.Dir, id)
	if err != nil {
		return nil, err
	}
	return at(pod.Root, dir)
}

// containerDir finds the directory in pod, a pod's cgroup directory, of
// the container whose id starts with id.
func containerDir(pod, id string) (string, error) {
	if id == "" {
		return "", errors.New("empty container id")
	}
	entries, err := os.ReadDir(pod)
	if err != nil {
		return "", fmt.Errorf("reading pod cgroup: %w", err)
	}
	var found, all []string
	for _, e := range entries {
		cid := ContainerID(e.Name())
		if !e.IsDir() || cid == "" {
			continue
		}
		all = append(all, cid)
		if strings.HasPrefix(cid, id) {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 1:
		return filepath.Join(pod, found[0]), nil
	case 0:
		return "", fmt.Errorf("no container of pod cgroup %s has an id starting with %q; its containers: %s", pod, id, listOrNone(all))
	}
	return "", fmt.Errorf("container id %q is ambiguous in pod cgroup %s: %s", id, pod, strings.Join(found, ", "))
}

func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	slices.Sort(ids)
	return strings.Join(ids, ", ")
}

// Pids returns the processes in the cgroup and in the cgroups below it.
func (c *Cgroup) Pids() ([]int, error) {
	var pids []int
	err := filepath.WalkDir(c.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == c.Dir {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil // removed meanwhile
		}
		for _, f := range strings.Fields(string(b)) {
			var pid int
			if _, err := fmt.Sscan(f, &pid); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the processes of cgroup %s: %w", c.Path, err)
	}
	return pids, nil
}

// FirstPid returns the first process of the cgroup, and of those below
// it: the one that started first.
func (c *Cgroup) FirstPid() (int, error) {
	pids, err := c.Pids()
	if err != nil {
		return 0, err
	}
	if pid, ok := First("/proc", pids); ok {
		return pid, nil
	}
	return 0, fmt.Errorf("no process is in cgroup %s", c.Path)
}

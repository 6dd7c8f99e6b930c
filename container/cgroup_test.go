package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
)

func TestV2Root(t *testing.T) {
	tests := []struct {
		name, mounts, want, err string
	}{
		{"unified", "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n", "/sys/fs/cgroup", ""},
		{"hybrid", "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n", "/sys/fs/cgroup/unified", ""},
		{"escaped", "cgroup2 /mnt/my\\040cgroups cgroup2 rw 0 0\n", "/mnt/my cgroups", ""},
		{"v1 only", "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n", "", "no cgroup v2 hierarchy is mounted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mounts")
			if err := os.WriteFile(path, []byte(tt.mounts), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := V2Root(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("V2Root = %q, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("V2Root = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestContainerID(t *testing.T) {
	tests := []struct{ name, want string }{
		{"cri-containerd-66221e7d988e.scope", "66221e7d988e"},
		{"crio-5f8c7268.scope", "5f8c7268"},
		{"docker-3e07aee08a48.scope", "3e07aee08a48"},
		{"crio-conmon-5f8c7268.scope", ""},
		{"851c75dad6ad", "851c75dad6ad"},
		{"cgroup.procs", ""},
		{"init.scope", ""},
		{"kubepods-burstable.slice", ""},
	}
	for _, tt := range tests {
		if got := ContainerID(tt.name); got != tt.want {
			t.Errorf("ContainerID(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// mkdirs makes each directory, relative to root, with its parents.
func mkdirs(t *testing.T, root string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

const uid = "18640755-cc12-4557-b96e-0f74d5b44d1d"

// The kubelet's layouts, on a fixture tree.
func TestPodDir(t *testing.T) {
	tests := []struct {
		name string
		dirs []string
		want string // the pod's directory, relative to the root
		err  string
	}{
		{"systemd", []string{
			"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice/cri-containerd-66221e7d.scope",
			"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod00000000_cc12_4557_b96e_0f74d5b44d1d.slice",
			"system.slice/cron.service",
		}, "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice", ""},
		{"systemd guaranteed", []string{
			"kubepods.slice/kubepods-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice/crio-5f8c.scope",
		}, "kubepods.slice/kubepods-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice", ""},
		{"cgroupfs", []string{
			"kubepods/burstable/pod18640755-cc12-4557-b96e-0f74d5b44d1d/851c75dad6ad",
			"kubepods/burstable/pod31dd0274-bb43-4975-bdbc-7e10047a23f8/851c75dad6ad",
		}, "kubepods/burstable/pod18640755-cc12-4557-b96e-0f74d5b44d1d", ""},
		{"cgroup root moved", []string{
			"kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice/cri-containerd-66.scope",
		}, "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice", ""},
		{"missing", []string{"kubepods/burstable/pod31dd0274-bb43-4975-bdbc-7e10047a23f8"}, "", "no cgroup of pod"},
		{"twice", []string{
			"kubepods/pod18640755-cc12-4557-b96e-0f74d5b44d1d",
			"kubepods.slice/kubepods-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice",
		}, "", "has 2 cgroups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdirs(t, root, tt.dirs...)
			got, err := podDir(root, uid)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("podDir = %q, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if want := filepath.Join(root, tt.want); err != nil || got != want {
				t.Fatalf("podDir = %q, %v; want %q", got, err, want)
			}
		})
	}
}

func TestPodDirBadUID(t *testing.T) {
	for _, bad := range []string{"", "../etc", "pod uid", "a/b"} {
		if _, err := podDir(t.TempDir(), bad); err == nil || !strings.Contains(err.Error(), "is not a pod UID") {
			t.Errorf("podDir(%q) = %v, want a pod UID error", bad, err)
		}
	}
}

func TestContainerDir(t *testing.T) {
	pod := t.TempDir()
	mkdirs(t, pod, "cri-containerd-66221e7d.scope", "cri-containerd-66aa0000.scope", "cri-containerd-b0b0.scope", "crio-conmon-b0b0.scope")
	tests := []struct{ id, want, err string }{
		{"66221", "cri-containerd-66221e7d.scope", ""},
		{"b0", "cri-containerd-b0b0.scope", ""},
		{"66", "", "is ambiguous"},
		{"ff", "", "66221e7d, 66aa0000, b0b0"},
		{"", "", "empty container id"},
	}
	for _, tt := range tests {
		got, err := containerDir(pod, tt.id)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("containerDir(%q) = %q, %v; want an error with %q", tt.id, got, err, tt.err)
			}
			continue
		}
		if want := filepath.Join(pod, tt.want); err != nil || got != want {
			t.Errorf("containerDir(%q) = %q, %v; want %q", tt.id, got, err, want)
		}
	}
}

// A fixture /proc: pid 30 started first; 10 and 20 in the same tick
// after it; 40's command name has a space and a parenthesis.
func TestFirst(t *testing.T) {
	proc := t.TempDir()
	stat := func(pid int, comm string, start int) {
		fields := make([]string, 20)
		for i := range fields {
			fields[i] = "0"
		}
		fields[19] = strconv.Itoa(start)
		line := strconv.Itoa(pid) + " (" + comm + ") S " + strings.Join(fields[1:], " ") + " 0 0\n"
		// fields[0] stands for the state, written above.
		mkdirs(t, proc, strconv.Itoa(pid))
		if err := os.WriteFile(filepath.Join(proc, strconv.Itoa(pid), "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat(10, "sh", 500)
	stat(20, "sh", 500)
	stat(30, "pause", 400)
	stat(40, "a b) c", 100)
	tests := []struct {
		pids []int
		want int
		ok   bool
	}{
		{[]int{10, 20, 30}, 30, true},
		{[]int{20, 10}, 10, true},
		{[]int{10, 40}, 40, true},
		{[]int{99, 20}, 20, true},
		{[]int{99}, 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		if got, ok := First(proc, tt.pids); got != tt.want || ok != tt.ok {
			t.Errorf("First(%v) = %d, %v; want %d, %v", tt.pids, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParsePidNamespace(t *testing.T) {
	tests := []struct {
		in  string
		ino uint64
		ok  bool
	}{
		{"4026531836", 4026531836, true},
		{"pid:[4026532201]", 4026532201, true},
		{"0", 0, false},
		{"net:[4026531840]", 0, false},
		{"-1", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		ns, err := ParsePidNamespace(tt.in)
		if (err == nil) != tt.ok || ns.Ino != tt.ino {
			t.Errorf("ParsePidNamespace(%q) = %+v, %v; want inode %d", tt.in, ns, err, tt.ino)
		}
	}
}

// realRoot returns the machine's cgroup v2 hierarchy, skipping without
// root.
func realRoot(t *testing.T) string {
	t.Helper()
	testutils.RequireRoot(t)
	root, err := V2Root("/proc/mounts")
	if err != nil {
		testutils.Skip(t, err.Error())
	}
	return root
}

// A pod laid out by the systemd driver in the real hierarchy, with a
// process in one container: the pod, its containers, their ids and
// levels, and the first process.
func TestRealPod(t *testing.T) {
	root := realRoot(t)
	top := "gtrace-container-test-" + strconv.Itoa(os.Getpid())
	pod := top + "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod18640755_cc12_4557_b96e_0f74d5b44d1d.slice"
	testutils.MakeCgroups(t, root, top, top+"/kubepods.slice", top+"/kubepods.slice/kubepods-burstable.slice", pod,
		pod+"/cri-containerd-aaaa1111.scope", pod+"/cri-containerd-bbbb2222.scope")

	p, err := FindPod(root, uid)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != "/"+pod || p.Level != 4 {
		t.Errorf("pod cgroup %s at level %d, want /%s at 4", p.Path, p.Level, pod)
	}
	var st os.FileInfo
	if st, err = os.Stat(filepath.Join(root, pod)); err != nil {
		t.Fatal(err)
	}
	if ino := st.Sys().(*syscall.Stat_t).Ino; p.ID != ino {
		t.Errorf("pod cgroup id %d, want its inode %d", p.ID, ino)
	}
	c, err := FindContainer(p, "bbbb")
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != "/"+pod+"/cri-containerd-bbbb2222.scope" || c.Level != 5 {
		t.Errorf("container cgroup %s at level %d", c.Path, c.Level)
	}
	for _, path := range []string{c.Dir, c.Path, strings.TrimPrefix(c.Path, "/")} {
		l, err := Lookup(root, path)
		if err != nil || *l != *c {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", path, l, err, c)
		}
	}
	if _, err := c.FirstPid(); err == nil || !strings.Contains(err.Error(), "no process is in cgroup") {
		t.Errorf("FirstPid of an empty cgroup: %v", err)
	}

	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	testutils.MoveToCgroup(t, c.Dir, sleeper.Process.Pid)
	for _, cg := range []*Cgroup{c, p} {
		if pid, err := cg.FirstPid(); err != nil || pid != sleeper.Process.Pid {
			t.Errorf("FirstPid of %s = %d, %v; want %d", cg.Path, pid, err, sleeper.Process.Pid)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	root := realRoot(t)
	tests := []struct{ path, err string }{
		{"", "empty cgroup path"},
		{"/no-such-cgroup-here", "no such file"},
		{"/no/such/dir", "no such file"},
		{"/proc", "is not in the cgroup v2 hierarchy"},
		{"/sys/fs/cgroup/../../no-such-dir", "no such file"},
		{"cgroup.procs", "not a directory"},
	}
	for _, tt := range tests {
		if c, err := Lookup(root, tt.path); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Lookup(%q) = %+v, %v; want an error with %q", tt.path, c, err, tt.err)
		}
	}
}

// The namespace of a process unshare puts in a new one: its inode and
// first process.
func TestRealPidNamespace(t *testing.T) {
	testutils.RequireRoot(t)
	cmd := exec.Command("unshare", "--pid", "--fork", "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	child := testutils.ChildOf(t, cmd.Process.Pid)
	link, err := os.Readlink("/proc/" + strconv.Itoa(child) + "/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := ParsePidNamespace(link)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := ns.FirstPid(); err != nil || pid != child {
		t.Errorf("FirstPid of %s = %d, %v; want %d", link, pid, err, child)
	}
	if _, err := (PidNamespace{Ino: 1}).FirstPid(); err == nil {
		t.Error("FirstPid of a namespace no process is in: no error")
	}
}

// A cgroup v2 mount of a subtree, as a bind mount or a cgroup
// namespace's root: levels would be counted from the wrong root.
func TestLookupSubtreeMount(t *testing.T) {
	root := realRoot(t)
	sub := "gtrace-container-subtree-" + strconv.Itoa(os.Getpid())
	testutils.MakeCgroups(t, root, sub, sub+"/child")
	mnt := t.TempDir()
	if err := unix.Mount(filepath.Join(root, sub), mnt, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmounting: %v", err)
		}
	})
	if c, err := Lookup(mnt, "child"); err == nil || !strings.Contains(err.Error(), "is not the hierarchy's root") {
		t.Errorf("Lookup below a subtree's mount = %+v, %v; want an error", c, err)
	}
}

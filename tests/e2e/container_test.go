package e2e

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"gtrace/container"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// opens is how many times each workload opens the test's file.
const opens = 7

// podUID is the UID of the pod the tests lay out.
const podUID = "7d3c9a1e-5b2f-4e8a-9c6d-0f1e2a3b4c5d"

// testPod is a pod's cgroup tree as the kubelet's systemd driver lays it
// out, under a directory of its own in the cgroup v2 hierarchy, with two
// containers, whose ids start with aaaa and bbbb.
type testPod struct {
	root, dir  string
	containers [2]string // their directories
}

// makePod lays out a testPod, removed when the test ends: the processes
// left in it are moved to the hierarchy's root first.
func makePod(t *testing.T) *testPod {
	t.Helper()
	testutils.RequireRoot(t)
	root, err := container.V2Root("/proc/mounts")
	if err != nil {
		testutils.Skip(t, err.Error())
	}
	top := fmt.Sprintf("gtrace-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	pod := filepath.Join(top, "kubepods.slice", "kubepods-burstable.slice",
		"kubepods-burstable-pod"+strings.ReplaceAll(podUID, "-", "_")+".slice")
	containers := [2]string{
		filepath.Join(pod, "cri-containerd-aaaa0123456789.scope"),
		filepath.Join(pod, "cri-containerd-bbbb0123456789.scope"),
	}
	testutils.MakeCgroups(t, root, top, filepath.Dir(filepath.Dir(pod)), filepath.Dir(pod), pod, containers[0], containers[1])
	return &testPod{root: root, dir: filepath.Join(root, pod), containers: [2]string{
		filepath.Join(root, containers[0]),
		filepath.Join(root, containers[1]),
	}}
}

// workload is a shell that opens file opens times once released.
type workload struct {
	pid     int // the shell's pid, as gtrace's pid shows it
	release io.WriteCloser
	cmd     *exec.Cmd
}

// startWorkload starts a workload, through unshare with its arguments
// when there are any, and, when cgroup is not "", moves it into that
// cgroup directory. It is killed when the test ends.
func startWorkload(t *testing.T, file, cgroup string, unshare ...string) *workload {
	t.Helper()
	script := fmt.Sprintf(`read go; i=0; while [ $i -lt %d ]; do : < '%s'; i=$((i+1)); done`, opens, file)
	args := []string{"sh", "-c", script}
	if len(unshare) > 0 {
		args = append(append([]string{"unshare"}, unshare...), args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	release := testutils.StartHeld(t, cmd)
	w := &workload{pid: cmd.Process.Pid, release: release, cmd: cmd}
	if len(unshare) > 0 {
		w.pid = testutils.ChildOf(t, cmd.Process.Pid)
	}
	if cgroup != "" {
		testutils.MoveToCgroup(t, cgroup, w.pid)
	}
	return w
}

// pidCountLine is a line of @[pid] = count().
var pidCountLine = regexp.MustCompile(`^@\[(\d+)\]: (\d+)$`)

// countOpens runs gtrace with flags, counting the opens of file by pid,
// releases the workloads once it is attached, waits for them, and
// returns its counts.
func countOpens(t *testing.T, file string, flags []string, predicate string, workloads ...*workload) map[int]int {
	t.Helper()
	if predicate != "" {
		predicate = " && " + predicate
	}
	script := fmt.Sprintf(`tracepoint:syscalls:sys_enter_openat /str(args.filename) == %q%s/ { @[pid] = count(); }`, file, predicate)
	var stdout, stderr strings.Builder
	tracer := exec.Command(harness.Bin(), append(append([]string{"-v"}, flags...), "-e", script)...)
	tracer.Stdout = &stdout
	attached := func(l string) bool { return strings.HasPrefix(l, "attached ") }
	lines := harness.StartWait(t, tracer, harness.Stderr, attached, nil)
	go func() {
		for l := range lines {
			stderr.WriteString(l + "\n")
		}
	}()
	for _, w := range workloads {
		w.release.Close()
	}
	for _, w := range workloads {
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("workload %d: %v", w.pid, err)
		}
	}
	tracer.Process.Signal(syscall.SIGINT)
	if err := tracer.Wait(); err != nil {
		t.Fatalf("gtrace %q: %v\nstdout:\n%s\nstderr:\n%s", flags, err, stdout.String(), stderr.String())
	}
	counts := map[int]int{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if m := pidCountLine.FindStringSubmatch(l); m != nil {
			pid, _ := strconv.Atoi(m[1])
			counts[pid], _ = strconv.Atoi(m[2])
		}
	}
	return counts
}

// uniqueFile is a file that only the test's workloads open.
func uniqueFile(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "opened")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// Three identical workloads, one in each of the pod's containers and
// one outside the pod: each filter counts the opens of exactly the
// workloads it names, and none of the others'.
func TestContainerCgroupFilters(t *testing.T) {
	tests := []struct {
		name string
		// flags and the script's predicate, given the pod.
		flags     func(p *testPod) []string
		predicate func(p *testPod) string
		want      []int // indexes of the workloads counted: 0, 1 in the containers, 2 outside
	}{
		{"--cgroup directory", func(p *testPod) []string { return []string{"--cgroup", p.containers[0]} }, nil, []int{0}},
		{"--cgroup path from the root", func(p *testPod) []string {
			return []string{"--cgroup", strings.TrimPrefix(p.containers[1], p.root)}
		}, nil, []int{1}},
		{"--cgroup of the pod", func(p *testPod) []string { return []string{"--cgroup", p.dir} }, nil, []int{0, 1}},
		{"--pod", func(p *testPod) []string { return []string{"--pod", podUID} }, nil, []int{0, 1}},
		{"--pod --container", func(p *testPod) []string { return []string{"--pod", podUID, "--container", "bbbb"} }, nil, []int{1}},
		{"cgroup in the script", nil, func(p *testPod) string {
			return fmt.Sprintf("cgroup == cgroupid(%q)", p.containers[0])
		}, []int{0}},
		{"$container_pid in the script", func(p *testPod) []string { return []string{"--pod", podUID} },
			func(p *testPod) string { return "pid == $container_pid" }, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := makePod(t)
			file := uniqueFile(t)
			ws := []*workload{
				startWorkload(t, file, p.containers[0]),
				startWorkload(t, file, p.containers[1]),
				startWorkload(t, file, ""),
			}
			var flags []string
			if tt.flags != nil {
				flags = tt.flags(p)
			}
			predicate := ""
			if tt.predicate != nil {
				predicate = tt.predicate(p)
			}
			got := countOpens(t, file, flags, predicate, ws...)
			want := map[int]int{}
			for _, i := range tt.want {
				want[ws[i].pid] = opens
			}
			if !maps.Equal(got, want) {
				t.Errorf("gtrace %q counted opens by pid %v, want %v (workloads %d, %d in the containers, %d outside)",
					flags, got, want, ws[0].pid, ws[1].pid, ws[2].pid)
			}
		})
	}
}

// A workload in a new PID namespace and one outside it: --pidns counts
// the first's opens alone.
func TestContainerPidNamespaceFilter(t *testing.T) {
	testutils.RequireRoot(t)
	file := uniqueFile(t)
	inside := startWorkload(t, file, "", "--pid", "--fork")
	outside := startWorkload(t, file, "")
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", inside.pid))
	if err != nil {
		t.Fatal(err)
	}
	got := countOpens(t, file, []string{"--pidns", ns}, "", inside, outside)
	if want := map[int]int{inside.pid: opens}; !maps.Equal(got, want) {
		t.Errorf("gtrace --pidns %s counted opens by pid %v, want %v (the other workload: %d)", ns, got, want, outside.pid)
	}
}

// $container_pid is the first process of the container each flag names,
// in the script and in an attach point, where kubectl-trace's text
// substitution puts it too: a uprobe on the container's libc, through
// its root.
func TestContainerPid(t *testing.T) {
	p := makePod(t)
	file := uniqueFile(t)
	first := startWorkload(t, file, p.containers[0])
	second := startWorkload(t, file, p.containers[1])
	inNamespace := startWorkload(t, file, "", "--pid", "--fork")
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", inNamespace.pid))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flags []string
		want  int
	}{
		{[]string{"--cgroup", p.containers[0]}, first.pid},
		{[]string{"--cgroup", p.containers[1]}, second.pid},
		{[]string{"--pod", podUID}, first.pid},
		{[]string{"--pod", podUID, "--container", "bbbb"}, second.pid},
		{[]string{"--pidns", ns}, inNamespace.pid},
	}
	libc := libcOf(t, first.pid)
	for _, tt := range tests {
		// A function libc lacks: the error names the path, with the pid.
		uprobe := fmt.Sprintf("uprobe:/proc/$container_pid/root%s:gtrace_no_such_function { @ = count(); }", libc)
		u := harness.Gtrace(t, append(slices.Clone(tt.flags), "--dry-run", "-e", uprobe)...)
		if want := fmt.Sprintf("No matches for uprobe /proc/%d/root%s:gtrace_no_such_function", tt.want, libc); !strings.Contains(u.Stderr, want) {
			t.Errorf("gtrace %q -e %q: exit %d, stderr:\n%s\nwant %q", tt.flags, uprobe, u.Code, u.Stderr, want)
		}
		args := append(slices.Clone(tt.flags), "-e", `begin { printf("%d\n", $container_pid); exit(); }`)
		r := harness.Gtrace(t, args...)
		if got := strings.TrimSpace(harness.StripAttaching(r.Stdout)); got != strconv.Itoa(tt.want) || r.Code != 0 {
			t.Errorf("gtrace %q printed %q (exit %d), want %d; stderr:\n%s", tt.flags, got, r.Code, tt.want, r.Stderr)
		}
	}
}

// The flags' errors, before anything is loaded.
func TestContainerFlagErrors(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--cgroup", "/no-such-cgroup-here"}, "no such file or directory"},
		{[]string{"--cgroup", "/proc"}, "is not in the cgroup v2 hierarchy"},
		{[]string{"--pod", "no-such-pod-uid"}, "no cgroup of pod no-such-pod-uid"},
		{[]string{"--pod", "../x"}, "is not a pod UID"},
		{[]string{"--container", "aaaa"}, "--container names a container of the pod of --pod, which is missing"},
		{[]string{"--cgroup", "/", "--pod", podUID}, "--cgroup and --pod both name a cgroup"},
		{[]string{"--pidns", "net:[4026531840]"}, "is not a PID namespace"},
		{[]string{"--pidns", "1"}, "$container_pid: no process is in PID namespace 1"},
		{nil, "Undefined or undeclared variable: $container_pid (no container is named: it is the first process of the one --cgroup, --pod or --pidns names)"},
	}
	for _, tt := range tests {
		args := append(slices.Clone(tt.args), "-e", `begin { printf("%d\n", $container_pid); exit(); }`)
		r := harness.Gtrace(t, args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("gtrace %q: exit %d, stderr:\n%s\nwant exit 1 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
	}
}

// libcOf is the path of the C library that process pid maps.
func libcOf(t *testing.T, pid int) string {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(maps), "\n") {
		f := strings.Fields(l)
		if len(f) == 6 && strings.Contains(filepath.Base(f[5]), "libc.so") {
			return f[5]
		}
	}
	t.Fatalf("process %d maps no libc", pid)
	return ""
}

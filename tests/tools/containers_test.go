package tools

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/container"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestPidnss runs pidnss while a shell in new UTS and PID namespaces,
// with a nodename of its own and in a cgroup of its own, sleeps a few
// times: a line shows that namespace's inode, the nodename and the
// cgroup, and no line shows the namespace with another.
func TestPidnss(t *testing.T) {
	testutils.RequireRoot(t)
	root, err := container.V2Root("/proc/mounts")
	if err != nil {
		testutils.Skip(t, err.Error())
	}
	cgroup := fmt.Sprintf("/gtrace-pidnss-%d", os.Getpid())
	dir := filepath.Join(root, cgroup)
	testutils.MakeCgroups(t, root, cgroup)

	const nodename = "gtrace-box"
	workload := exec.Command("unshare", "--uts", "--pid", "--fork", "sh", "-c",
		"hostname "+nodename+"; echo ready; read go; i=0; while [ $i -lt 20 ]; do sleep 0.02; i=$((i+1)); done")
	out, err := workload.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	release := testutils.StartHeld(t, workload)
	if l, err := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("the workload printed %q, %v", l, err)
	}
	shell := testutils.ChildOf(t, workload.Process.Pid)
	testutils.MoveToCgroup(t, dir, shell)
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", shell))
	if err != nil {
		t.Fatal(err)
	}
	pidns := strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")

	tracer := exec.Command(harness.Bin(), "tools", "pidnss", "2")
	var stderr strings.Builder
	tracer.Stderr = &stderr
	banner := func(l string) bool { return l == "Tracing PID namespace switches. Hit Ctrl-C to end." }
	lines := harness.StartWait(t, tracer, harness.Stdout, banner, nil)
	release.Close()
	if err := workload.Wait(); err != nil {
		t.Fatalf("workload: %v", err)
	}
	var output []string
	for l := range lines {
		output = append(output, l)
	}
	if err := tracer.Wait(); err != nil {
		t.Fatalf("pidnss: %v\n%s", err, stderr.String())
	}

	found := false
	for _, l := range output {
		f := strings.Fields(l)
		if len(f) != 4 || f[0] != pidns {
			continue
		}
		if f[1] != nodename || f[3] != "unified:"+cgroup {
			t.Errorf("line %q: want nodename %s and cgroup unified:%s", l, nodename, cgroup)
		}
		if n, err := strconv.Atoi(f[2]); err != nil || n < 1 {
			t.Errorf("line %q: no switches", l)
		}
		found = true
	}
	if !found {
		t.Errorf("no line of PID namespace %s in:\n%s", pidns, strings.Join(output, "\n"))
	}
	if len(output) < 2 || output[1] != "PIDNS        NODENAME               SWITCHES CGROUP" {
		t.Errorf("no header after the blank line:\n%s", strings.Join(output, "\n"))
	}
}

// TestToolContainerFilter runs opensnoop with --cgroup while two shells
// open a file seven times each, one of them in the cgroup: the tool
// prints the opens of that one alone. The shells wait on FIFOs until
// the tool's -c command, which starts once the probes are attached,
// releases them, and it waits for their end in turn: then the tool
// ends, having printed every event.
func TestToolContainerFilter(t *testing.T) {
	testutils.RequireRoot(t)
	root, err := container.V2Root("/proc/mounts")
	if err != nil {
		testutils.Skip(t, err.Error())
	}
	cgroup := fmt.Sprintf("gtrace-opensnoop-%d", os.Getpid())
	dir := filepath.Join(root, cgroup)
	testutils.MakeCgroups(t, root, cgroup)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "opened")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var shells []*exec.Cmd
	var release strings.Builder
	for i := range 2 {
		start, done := filepath.Join(tmp, fmt.Sprintf("start%d", i)), filepath.Join(tmp, fmt.Sprintf("done%d", i))
		for _, fifo := range []string{start, done} {
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		sh := exec.Command("sh", "-c", fmt.Sprintf("read go < '%s'; i=0; while [ $i -lt 7 ]; do : < '%s'; i=$((i+1)); done; echo > '%s'", start, file, done))
		if err := sh.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
		shells = append(shells, sh)
		fmt.Fprintf(&release, "echo > '%s'\n", start)
	}
	inside := shells[0].Process.Pid
	testutils.MoveToCgroup(t, dir, inside)
	script := filepath.Join(tmp, "release")
	for i := range 2 {
		fmt.Fprintf(&release, "read x < '%s'\n", filepath.Join(tmp, fmt.Sprintf("done%d", i)))
	}
	if err := os.WriteFile(script, []byte(release.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	r := harness.RunTimeout(t, time.Minute, harness.Bin(), "tools", "opensnoop", "--cgroup", dir, "-c", "sh "+script)
	if r.Code != 0 {
		t.Fatalf("opensnoop: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	counts := map[string]int{}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[4] == file {
			counts[f[0]]++
		}
	}
	if want := map[string]int{strconv.Itoa(inside): 7}; !maps.Equal(counts, want) {
		t.Errorf("opensnoop --cgroup printed opens by pid %v, want %v (the other shell: %d); it printed:\n%s",
			counts, want, shells[1].Process.Pid, r.Stdout)
	}
}

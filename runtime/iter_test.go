package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// runIter runs src, skipping the test on a kernel that refuses to load
// iterators, and returns its output.
func runIter(t *testing.T, src string) string {
	t.Helper()
	testutils.RequireRoot(t)
	var stdout, stderr bytes.Buffer
	_, err := Run(compile(t, src), &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Quiet: true})
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) {
		testutils.Skip(t, "the kernel cannot load iterators: "+err.Error())
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// TestIterTask reads the task iterator to its end: every task once,
// this one among them, and nothing for the run after the last.
func TestIterTask(t *testing.T) {
	out := runIter(t, `iter:task { printf("%d %s|\n", ctx.task.pid, ctx.task.comm); }`)
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d %s|\n", os.Getpid(), strings.TrimSpace(string(self)))
	if !strings.Contains(out, want) || strings.Contains(out, "\n0 |") || strings.Count(out, want) != 1 {
		t.Errorf("output lacks %q once, or has an empty task:\n%s", want, out)
	}
}

// TestIterTaskFile checks the fields of another iterator: this
// process's open file shows with its descriptor.
func TestIterTaskFile(t *testing.T) {
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := runIter(t, fmt.Sprintf(`iter:task_file /ctx.task.pid == %d/ { printf("fd %%d ino %%d\n", ctx.fd, ctx.file.f_inode.i_ino); }`, os.Getpid()))
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("fd %d ino %d\n", f.Fd(), st.Ino); !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestIterPin pins an iterator instead of reading it: reading the pin
// later runs the program, after gtrace has stopped.
func TestIterPin(t *testing.T) {
	pin := fmt.Sprintf("gtrace_test_%d", os.Getpid())
	path := filepath.Join("/sys/fs/bpf", pin)
	defer os.Remove(path)
	out := runIter(t, `iter:task:`+pin+` { printf("pinned %d\n", ctx.task.pid); }`)
	if !strings.HasPrefix(out, "Program pinned to "+path+"\n") {
		t.Fatalf("output:\n%s", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("pinned %d\n", os.Getpid()); !strings.Contains(string(b), want) {
		t.Errorf("the pinned iterator's output lacks %q:\n%s", want, b)
	}
}

// TestCommFromPid reads comm(pid) of a child through the kfunc
// bpf_task_from_pid, and N/A with a warning for a pid no task has.
func TestCommFromPid(t *testing.T) {
	testutils.RequireRoot(t)
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	src := fmt.Sprintf(`iter:task /ctx.task.pid == %d/ { printf("%%s %%s|%%s\n", comm(ctx.task.pid), ctx.task.comm, comm(-5)); }`, child.Process.Pid)
	var stdout, stderr bytes.Buffer
	if _, err := Run(compile(t, src), &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if got, want := strings.TrimRight(stdout.String(), "\n"), "sleep sleep|N/A"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The column of comm(-5) depends on the length of the child's pid.
	col := strings.Index(src, "comm(-5)") + 1
	if want := fmt.Sprintf("stdin:1:%d-%d: WARNING: No such process (pid=-5)\n", col, col+8); stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

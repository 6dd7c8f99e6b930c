package vm

import (
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// vmIterScript reads iterators under the guest's kernel: every task
// (pid 1 among them), gtrace's own open files, and a pinned iterator
// read by cat after gtrace has exited.
const vmIterScript = vmShellFuncs + `
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
section task /gtrace -e 'iter:task { printf("task %d|%s\n", ctx.task.pid, ctx.task.comm); }'
section file /gtrace -e 'iter:task_file /ctx.task.pid == pid/ { printf("file %d\n", ctx.fd); }'
section vma /gtrace -e 'iter:task_vma /ctx.task.pid == pid/ { printf("vma %d\n", ctx.vma.vm_end > ctx.vma.vm_start); }'
section pin /gtrace -e 'iter:task:gtrace_iter { printf("pinned %d\n", ctx.task.pid); }'
section read cat /sys/fs/bpf/gtrace_iter
`

// TestVMIter runs iter: probes under Debian's 6.1 kernel, older than
// the host's.
func TestVMIter(t *testing.T) {
	res := vmtest.Run(t, vmtest.Config{
		Kernel:  vmtest.Debian61,
		Files:   map[string]string{"/gtrace": vmtest.BuildGtrace(t)},
		Timeout: 3 * time.Minute,
	}, "sh", "-c", vmIterScript)
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	sections, err := parseVMSections(res.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ section, want string }{
		{"task", "task 1|"},
		{"task", "|gtrace\n"},
		{"file", "file 2\n"},
		{"vma", "vma 1\n"},
		{"pin", "Program pinned to /sys/fs/bpf/gtrace_iter\n"},
		{"read", "pinned 1\n"},
	} {
		s := sections[tt.section]
		if s.status != 0 || !strings.Contains(s.stdout, tt.want) {
			t.Errorf("%s: status %d, want %q in the output\nstdout:\n%s\nstderr:\n%s", tt.section, s.status, tt.want, s.stdout, s.stderr)
		}
	}
	if strings.Contains(sections["task"].stdout, "task 0|") {
		t.Errorf("task: the run after the last task printed:\n%s", sections["task"].stdout)
	}
}

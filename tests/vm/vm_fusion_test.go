package vm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// vmFusionScript traces every syscall tracepoint, fused into the two
// raw_syscalls dispatchers, over busybox dd reading a 10000-byte file in
// blocks of 4096: under cpid, the -c shell's execve of dd, then dd's own
// calls.
const vmFusionScript = vmShellFuncs + `
dd if=/dev/zero of=/tmp/data bs=1000 count=10 2>/dev/null
section fusion /gtrace -e 'tracepoint:syscalls:sys_enter_* /pid == cpid/ { @[probe] = count(); }' \
	-c "dd if=/tmp/data of=/dev/null bs=4096"
`

// TestVMFusion checks that the fused dispatchers load and dispatch on
// both guest kernels: they read thread_info.status through
// bpf_get_current_task_btf, which the verifier must accept on 6.1 too.
func TestVMFusion(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, Timeout: 3 * time.Minute,
				// Attaching raw_syscalls patches the static branch in
				// syscall_trace_enter. With two vCPUs under TCG, the
				// 6.12 guest once crashed there while the other vCPU
				// ran system calls; with one, no code is modified
				// under another CPU.
				CPUs: 1,
			}, vmFusionScript)
			s := sections.get(t, "fusion", 0)
			out := s.stdout
			if n := vmAttaching(s.stderr); n < 300 {
				t.Errorf("attached %d probes, want every syscall tracepoint", n)
			}
			// dd writes its 3 blocks and then its record counts.
			got := strings.Split(out, "\n")
			for _, want := range []string{"@[tracepoint:syscalls:sys_enter_execve]: 1",
				"@[tracepoint:syscalls:sys_enter_read]: 4", "@[tracepoint:syscalls:sys_enter_write]: 4"} {
				if !slices.Contains(got, want) {
					t.Errorf("no line %q", want)
				}
			}
		})
	}
}

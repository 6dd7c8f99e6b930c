package tests

import (
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSyscallFusion runs syscall tracepoints fused into raw_syscalls and
// as the kernel's own tracepoints (GTRACE_NO_FUSION) on the same
// workload: counts, syscall numbers, arguments and return values must
// agree.
func TestSyscallFusion(t *testing.T) {
	requireRoot(t)
	work := writeScript(t, "work.sh", "ls / > /dev/null; cat /etc/hostname /etc/passwd > /dev/null; mkdir -p /tmp/gtrace-fusion; rmdir /tmp/gtrace-fusion\n")
	script := `tracepoint:syscalls:sys_enter_m*, tracepoint:syscalls:sys_enter_open*, tracepoint:syscalls:sys_enter_read
		/pid == cpid/ { @n[probe, args.__syscall_nr] = count(); }
	tracepoint:syscalls:sys_exit_m*, tracepoint:syscalls:sys_exit_read /pid == cpid/ { @ret[probe, args.ret > 0] = count(); }
	tracepoint:syscalls:sys_enter_openat /pid == cpid/ { @open[str(args.filename), args.dfd, args.flags] = count(); }
	tracepoint:syscalls:sys_enter_read /pid == cpid/ { @read[args.fd, args.count] = count(); }`
	run := func(fused bool) []string {
		if !fused {
			t.Setenv("GTRACE_NO_FUSION", "1") // until the test ends
		}
		r := runTimeout(t, 120*time.Second, gtraceBin, "-c", "/bin/sh "+work, "-e", script)
		if r.code != 0 {
			t.Fatalf("fused=%v: exit code %d, stderr:\n%s", fused, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(stripAttaching(r.stdout)), "\n")
		sort.Strings(lines) // maps sort equal counts in no set order
		return lines
	}
	fused := run(true)
	plain := run(false)
	if strings.Join(fused, "\n") != strings.Join(plain, "\n") {
		t.Errorf("fused:\n%s\ntracepoints:\n%s", strings.Join(fused, "\n"), strings.Join(plain, "\n"))
	}
	if len(fused) < 10 {
		t.Errorf("the workload fired too few probes:\n%s", strings.Join(fused, "\n"))
	}
}

// TestSyscallFusionAll attaches every syscall tracepoint, which fusion
// turns into two raw tracepoint links, and checks what one workload
// calls.
func TestSyscallFusionAll(t *testing.T) {
	requireRoot(t)
	r := gtrace(t, "-c", dd("bs=1 count=5"), "-e", `tracepoint:syscalls:sys_enter_* /pid == cpid/ { @[probe] = count(); }`)
	if r.code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
	}
	if !regexp.MustCompile(`^Attaching [3-9]\d\d probes\.\.\.\n`).MatchString(r.stdout) {
		t.Errorf("want hundreds of probes attached:\n%s", r.stdout)
	}
	for _, want := range []string{"@[tracepoint:syscalls:sys_enter_read]: ", "@[tracepoint:syscalls:sys_enter_write]: ", "@[tracepoint:syscalls:sys_enter_exit_group]: 1\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("missing %q in:\n%s", want, r.stdout)
		}
	}
}

// compatProgram makes a native getpid, five ia32 getpid calls through
// int 0x80, whose number, 20, is writev's on x86_64, then a native getpid
// again. It exits 2 where the kernel runs no ia32 system calls.
const compatProgram = `#include <unistd.h>
#include <sys/syscall.h>

int main(void) {
	long pid = getpid();
	for (int i = 0; i < 5; i++) {
		long r = 20;
		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
		if (r != pid)
			return 2;
	}
	return syscall(SYS_getpid) == pid ? 0 : 1;
}
`

// TestSyscallFusionCompat checks that fused probes ignore ia32 system
// calls, as the syscall tracepoints do: their numbers would otherwise
// reach the programs of other system calls.
func TestSyscallFusionCompat(t *testing.T) {
	requireRoot(t)
	bin := buildUstackC(t, "compat", compatProgram, "-O1")
	if err := exec.Command(bin).Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
			t.Skip("this kernel runs no ia32 system calls")
		}
		t.Fatalf("%s: %v", bin, err)
	}
	script := `tracepoint:syscalls:sys_enter_writev, tracepoint:syscalls:sys_exit_writev,
	tracepoint:syscalls:sys_enter_getpid, tracepoint:syscalls:sys_exit_getpid,
	tracepoint:syscalls:sys_enter_sync, tracepoint:syscalls:sys_enter_syncfs,
	tracepoint:syscalls:sys_enter_acct, tracepoint:syscalls:sys_enter_chroot,
	tracepoint:syscalls:sys_enter_swapon /pid == cpid/ { @[probe] = count(); }`
	want := "@[tracepoint:syscalls:sys_enter_getpid]: 2\n@[tracepoint:syscalls:sys_exit_getpid]: 2\n"
	for _, fusion := range []bool{true, false} {
		if !fusion {
			t.Setenv("GTRACE_NO_FUSION", "1")
		}
		r := gtrace(t, "-c", bin, "-e", script)
		if r.code != 0 {
			t.Fatalf("fusion %v: exit code %d, stderr:\n%s", fusion, r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "Attaching 9 probes...\n") {
			t.Errorf("fusion %v: want 9 probes attached:\n%s", fusion, r.stdout)
		}
		// Equal counts print in no set order.
		lines := strings.SplitAfter(mapOutput(r.stdout), "\n")
		sort.Strings(lines)
		if got := strings.Join(lines, ""); got != want {
			t.Errorf("fusion %v: got\n%s\nwant the native getpids only:\n%s", fusion, got, want)
		}
	}
}

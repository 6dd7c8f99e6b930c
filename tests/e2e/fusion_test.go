package e2e

import (
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestSyscallFusion runs syscall tracepoints fused into raw_syscalls and
// as the kernel's own tracepoints (--no-fusion) on the same
// workload: counts, syscall numbers, arguments and return values must
// agree.
func TestSyscallFusion(t *testing.T) {
	testutils.RequireRoot(t)
	work := harness.WriteScript(t, "work.sh", "ls / > /dev/null; cat /etc/hostname /etc/passwd > /dev/null; mkdir -p /tmp/gtrace-fusion; rmdir /tmp/gtrace-fusion\n")
	script := `tracepoint:syscalls:sys_enter_m*, tracepoint:syscalls:sys_enter_open*, tracepoint:syscalls:sys_enter_read
		/pid == cpid/ { @n[probe, args.__syscall_nr] = count(); }
	tracepoint:syscalls:sys_exit_m*, tracepoint:syscalls:sys_exit_read /pid == cpid/ { @ret[probe, args.ret > 0] = count(); }
	tracepoint:syscalls:sys_enter_openat /pid == cpid/ { @open[str(args.filename), args.dfd, args.flags] = count(); }
	tracepoint:syscalls:sys_enter_read /pid == cpid/ { @read[args.fd, args.count] = count(); }`
	run := func(fused bool) []string {
		args := fusionArgs(t, fused, script)
		r := harness.RunTimeout(t, 120*time.Second, harness.Bin(), append(args, "-c", "/bin/sh "+work, "-e", script)...)
		if r.Code != 0 {
			t.Fatalf("fused=%v: exit code %d, stderr:\n%s", fused, r.Code, r.Stderr)
		}
		lines := strings.Split(strings.TrimSpace(harness.StripAttaching(r.Stdout)), "\n")
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
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-c", harness.DD("bs=1 count=5"), "-e", `tracepoint:syscalls:sys_enter_* /pid == cpid/ { @[probe] = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if !regexp.MustCompile(`(?m)^Attached [3-9]\d\d probes\n`).MatchString(r.Stderr) {
		t.Errorf("want hundreds of probes attached:\n%s", r.Stderr)
	}
	for _, want := range []string{"@[tracepoint:syscalls:sys_enter_read]: ", "@[tracepoint:syscalls:sys_enter_write]: ", "@[tracepoint:syscalls:sys_enter_exit_group]: 1\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("missing %q in:\n%s", want, r.Stdout)
		}
	}
}

// fusionArgs returns the options that run script fused or not, and
// checks with --dry-run -v that they do: a fused script loads the
// raw_syscalls dispatcher.
func fusionArgs(t *testing.T, fused bool, script string) []string {
	t.Helper()
	var args []string
	if !fused {
		args = []string{"--no-fusion"}
	}
	r := harness.Gtrace(t, append(args, "--dry-run", "-v", "-e", script)...)
	if r.Code != 0 {
		t.Fatalf("--dry-run %v: exit code %d, stderr:\n%s", args, r.Code, r.Stderr)
	}
	if got := strings.Contains(r.Stdout+r.Stderr, "rawtracepoint:sys_enter: "); got != fused {
		t.Fatalf("%v: the raw_syscalls dispatcher loaded: %v, want %v:\n%s%s", args, got, fused, r.Stdout, r.Stderr)
	}
	return args
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
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "compat", map[string]string{"compat.c": compatProgram}, "-O1")
	if err := exec.Command(bin).Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
			testutils.Skip(t, "this kernel runs no ia32 system calls")
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
		args := fusionArgs(t, fusion, script)
		r := harness.Gtrace(t, append(args, "-c", bin, "-e", script)...)
		if r.Code != 0 {
			t.Fatalf("fusion %v: exit code %d, stderr:\n%s", fusion, r.Code, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "Attached 9 probes\n") {
			t.Errorf("fusion %v: want 9 probes attached:\n%s", fusion, r.Stderr)
		}
		// Equal counts print in no set order.
		lines := strings.SplitAfter(harness.MapOutput(r.Stdout), "\n")
		sort.Strings(lines)
		if got := strings.Join(lines, ""); got != want {
			t.Errorf("fusion %v: got\n%s\nwant the native getpids only:\n%s", fusion, got, want)
		}
	}
}

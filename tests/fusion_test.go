package tests

import (
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

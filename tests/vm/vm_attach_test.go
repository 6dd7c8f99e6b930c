package vm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/internal/vmtest"
)

// vmAttachScript times gtrace attaching and detaching many kprobes in the
// guest. Each run counts calls until a -c child, started once every probe
// is attached, has slept 0.1 s and written the time it ended to
// /tmp/end. Times come from /proc/uptime, in hundredths of a second:
// start is before gtrace starts, end when the child ends (tracing stops),
// exit when gtrace has exited. gtrace's own "attached N links in X" line
// gives the attach time alone.
const vmAttachScript = `
aff=/sys/kernel/tracing/available_filter_functions
printf '#!/bin/sh\nsleep 0.1\ncut -d" " -f1 /proc/uptime >/tmp/end\n' >/tmp/child
chmod +x /tmp/child
now() { cut -d' ' -f1 /proc/uptime; }

# bench NAME PROBES runs gtrace on PROBES and prints one line of figures.
bench() {
	rm -f /tmp/end
	start=$(now)
	/gtrace -v -e "$2 { @ = count(); }" -c /tmp/child >/tmp/out 2>/tmp/err
	status=$?
	exit=$(now)
	echo "@@ $1 status=$status start=$start end=$(cat /tmp/end) exit=$exit" \
		"$(grep -h -e '^Attached' -e '^attached' /tmp/out /tmp/err | tr '\n' ' ')"
	[ $status = 0 ] || tail -3 /tmp/err | sed 's/^/@@ error: /'
}

# 6.1 holds a program and a link per function; the default limit of
# probes is bpftrace's, 1024.
ulimit -n 100000
export BPFTRACE_MAX_PROBES=5000

for p in vfs_ ext4_ tcp_ security_; do
	echo "@@ functions $p $(grep "^$p" $aff | cut -d' ' -f1 | sort -u | wc -l)"
done
bench vfs 'kprobe:vfs_*'
bench ext4-entry-return 'kprobe:ext4_*,kretprobe:ext4_*'
bench big 'kprobe:ext4_*,kprobe:vfs_*,kprobe:tcp_*,kprobe:security_*'
`

// TestVMAttachTimes measures how long gtrace takes to attach and detach
// kprobes on wildcards of about 75 and over 1000 functions, under Debian's
// 6.12 kernel (kprobe.multi: one program and one link for all functions)
// and 6.1 (one program and link per function, loaded and attached in
// parallel), one boot per kernel. It is a measurement, not a test: it
// prints the figures with t.Log and runs only with GTRACE_VM_BENCH=1, as
// the boots take minutes and the figures vary with the host. Unless KVM
// works, the guest is emulated (TCG), many times slower than hardware.
//
//	GTRACE_VM_BENCH=1 go test ./tests/vm -run TestVMAttachTimes -v -timeout 30m
func TestVMAttachTimes(t *testing.T) {
	testutils.OptIn(t, "GTRACE_VM_BENCH", "a measurement")
	gtrace := vmtest.BuildGtrace(t)
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			res := vmtest.Run(t, vmtest.Config{
				Kernel:  k,
				Files:   map[string]string{"/gtrace": gtrace},
				Timeout: 15 * time.Minute,
			}, "sh", "-c", vmAttachScript)
			if res.ExitCode != 0 {
				t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			t.Logf("kernel %s, boot to power off %v", k.Name, res.Boot.Round(time.Second))
			for _, line := range strings.Split(res.Stdout, "\n") {
				if strings.HasPrefix(line, "@@ ") {
					t.Log(benchFigures(line))
				}
			}
		})
	}
}

// benchFigures adds the whole run and the detach time, in seconds, to a
// guest's "@@ NAME status=S start=T end=T exit=T ..." line.
func benchFigures(line string) string {
	fields := map[string]float64{}
	for _, f := range strings.Fields(line) {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(value, &v); err == nil {
			fields[name] = v
		}
	}
	if _, ok := fields["exit"]; !ok {
		return line
	}
	return fmt.Sprintf("%s | whole run %.2f s, detach (child's end to exit) %.2f s",
		line, fields["exit"]-fields["start"], fields["exit"]-fields["end"])
}

// Package workload runs the overhead benchmark's workload: dd copying
// /dev/zero to /dev/null one byte at a time, so that each read(2) is one
// event, pinned to one CPU as the study pins it.
package workload

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Run is one finished workload.
type Run struct {
	Pid  int
	Wall time.Duration // from fork to exit
}

// DD runs dd if=/dev/zero of=/dev/null bs=1 count=events pinned to cpu.
// dd inherits the CPU mask of the thread that forks it, so that thread is
// pinned for the fork and restored after.
func DD(cpu, events int) (Run, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return Run{}, fmt.Errorf("CPU affinity: %w", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return Run{}, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	defer unix.SchedSetaffinity(0, &old)
	dd := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count="+strconv.Itoa(events))
	start := time.Now()
	if out, err := dd.CombinedOutput(); err != nil {
		return Run{}, fmt.Errorf("dd: %w\n%s", err, out)
	}
	return Run{Pid: dd.Process.Pid, Wall: time.Since(start)}, nil
}

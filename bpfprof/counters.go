package bpfprof

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"gtrace/kernel"
)

// counter is a perf counter read at entry and exit of each run.
type counter struct {
	name        string
	typ, config uint64
}

// hardwareCounters are what bpftool prog profile reads where the CPU
// has a PMU.
var hardwareCounters = []counter{
	{name: "cycles", typ: unix.PERF_TYPE_HARDWARE, config: unix.PERF_COUNT_HW_CPU_CYCLES},
	{name: "instructions", typ: unix.PERF_TYPE_HARDWARE, config: unix.PERF_COUNT_HW_INSTRUCTIONS},
	{name: "llc_misses", typ: unix.PERF_TYPE_HW_CACHE, config: unix.PERF_COUNT_HW_CACHE_LL |
		unix.PERF_COUNT_HW_CACHE_OP_READ<<8 | unix.PERF_COUNT_HW_CACHE_RESULT_MISS<<16},
}

// softwareCounters stand in where there is no PMU: the CPU clock, in
// nanoseconds, counted by the kernel rather than the CPU.
var softwareCounters = []counter{
	{name: "cpu_clock_ns", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_CPU_CLOCK},
}

// maxCounters bounds the counters the BPF programs keep room for.
const maxCounters = 3

// perfEvents are the counters opened on every online CPU.
type perfEvents struct {
	counters []counter
	// fds[i][cpu] is counter i's event on cpu, -1 where the CPU is
	// offline.
	fds [][]int
	// noPMU says why there are no hardware counters, if there are none.
	noPMU string
}

// openCounters opens the hardware counters on each online CPU, or the
// software ones where the machine has no PMU. A counter that cannot be
// opened is left out; notes say which and why.
func openCounters(ncpu int) (*perfEvents, []string, error) {
	online, err := kernel.OnlineCPUs()
	if err != nil {
		return nil, nil, err
	}
	ev := &perfEvents{}
	var notes []string
	set := hardwareCounters
	if err := probePMU(online); err != nil {
		ev.noPMU = err.Error()
		set = softwareCounters
	}
	for _, c := range set {
		fds, err := openCounter(c, online, ncpu)
		if err != nil {
			notes = append(notes, fmt.Sprintf("counter %s left out: %v", c.name, err))
			continue
		}
		ev.counters = append(ev.counters, c)
		ev.fds = append(ev.fds, fds)
	}
	return ev, notes, nil
}

// probePMU opens a cycles counter on the first online CPU: it fails
// where the kernel has no hardware PMU, as in most virtual machines.
func probePMU(online []int) error {
	if len(online) == 0 {
		return errors.New("no online CPU")
	}
	fd, err := perfOpen(hardwareCounters[0], online[0])
	if err != nil {
		return fmt.Errorf("perf_event_open cycles: %w", err)
	}
	unix.Close(fd)
	return nil
}

// openCounter opens c on each online CPU.
func openCounter(c counter, online []int, ncpu int) ([]int, error) {
	fds := make([]int, ncpu)
	for i := range fds {
		fds[i] = -1
	}
	for _, cpu := range online {
		if cpu >= ncpu {
			continue
		}
		fd, err := perfOpen(c, cpu)
		if err != nil {
			closeFDs(fds)
			return nil, fmt.Errorf("perf_event_open on CPU %d: %w", cpu, err)
		}
		fds[cpu] = fd
	}
	return fds, nil
}

func perfOpen(c counter, cpu int) (int, error) {
	attr := unix.PerfEventAttr{Type: uint32(c.typ), Config: c.config, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{}))}
	return unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (ev *perfEvents) close() {
	for _, fds := range ev.fds {
		closeFDs(fds)
	}
}

func (ev *perfEvents) names() []string {
	var out []string
	for _, c := range ev.counters {
		out = append(out, c.name)
	}
	return out
}

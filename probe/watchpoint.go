package probe

import (
	"errors"
	"fmt"
	"gtrace/lang/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"gtrace/kernel"
)

// watchpoint:ADDR:LEN:MODE is a hardware breakpoint: a perf event of type
// PERF_TYPE_BREAKPOINT that fires when the CPU reads, writes or executes
// the watched bytes. With -p or -c it watches every thread of that
// process, and the threads they create; otherwise every CPU, which suits
// a kernel address.
func init() {
	register(&provider{kind: Watchpoint, names: []string{"watchpoint", "w"},
		progType: ebpf.PerfEvent, context: PerfSample, perTask: true,
		parse: parseWatchpoint, attach: attachWatchpoint})
}

// Breakpoint types of perf_event_attr.bp_type (linux/hw_breakpoint.h).
const (
	hwBreakpointR = 1
	hwBreakpointW = 2
	hwBreakpointX = 4
)

var watchBits = map[rune]uint32{'r': hwBreakpointR, 'w': hwBreakpointW, 'x': hwBreakpointX}

// watchModes are the modes x86's debug registers can watch: a read
// alone is not one of them.
var watchModes = []string{"rw", "w", "x"}

func parseWatchpoint(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) != 3 {
		return nil, fmt.Errorf("watchpoint probe type requires 3 arguments, found %d", len(parts))
	}
	addr, err := token.ParseInt(parts[0])
	if err != nil {
		return nil, fmt.Errorf("Invalid function/address argument: %w", err)
	}
	n, err := token.ParseInt(parts[1])
	if err != nil {
		return nil, fmt.Errorf("Invalid length argument: %w", err)
	}
	if addr == 0 {
		return nil, errors.New("watchpoint must be attached to a non-zero address")
	}
	if n != 1 && n != 2 && n != 4 && n != 8 {
		return nil, errors.New("watchpoint length must be one of (1,2,4,8)")
	}
	mode := []byte(parts[2])
	slices.Sort(mode)
	if err := checkWatchMode(string(mode)); err != nil {
		return nil, err
	}
	name := "watchpoint:" + strconv.FormatUint(addr, 10) + ":" + strconv.FormatUint(n, 10) + ":" + string(mode)
	return []Probe{{Kind: Watchpoint, Name: name, Address: addr, Length: n, Event: string(mode)}}, nil
}

// checkWatchMode checks a mode, its letters sorted.
func checkWatchMode(mode string) error {
	if mode == "" || strings.Trim(mode, "rwx") != "" {
		return errors.New("watchpoint mode must be combination of (r,w,x)")
	}
	for i := 1; i < len(mode); i++ {
		if mode[i] == mode[i-1] {
			return errors.New("watchpoint modes may not be duplicated")
		}
	}
	if !slices.Contains(watchModes, mode) {
		return fmt.Errorf("invalid watchpoint mode: %s (supported modes: %s)", mode, strings.Join(watchModes, ","))
	}
	return nil
}

// attachWatchpoint opens the breakpoint on each thread of pid, or on
// each CPU when pid is 0. Threads may exit and CPUs go offline while it
// does: only when no event at all opens is it an error.
func attachWatchpoint(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error) {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_BREAKPOINT,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: 1,
		// Threads created later are watched too.
		Bits: unix.PerfBitInherit,
		Ext1: p.Address,
		Ext2: p.Length,
	}
	for _, c := range p.Event {
		attr.Bp_type |= watchBits[c]
	}
	if attr.Bp_type&hwBreakpointX != 0 {
		attr.Ext2 = uint64(unsafe.Sizeof(uintptr(0))) // the kernel wants sizeof(long)
	}
	tids, cpus := []int{-1}, []int{-1}
	var err error
	if pid != 0 {
		tids, err = threads(pid)
	} else {
		cpus, err = kernel.OnlineCPUs()
	}
	if err != nil {
		return nil, err
	}
	var links []link.Link
	var last error
	for _, cpu := range cpus {
		for _, tid := range tids {
			l, err := openBreakpoint(&attr, tid, cpu, prog)
			if err != nil {
				last = err
				continue
			}
			links = append(links, l)
		}
	}
	if len(links) == 0 {
		return nil, last
	}
	return links, nil
}

func openBreakpoint(attr *unix.PerfEventAttr, tid, cpu int, prog *ebpf.Program) (link.Link, error) {
	fd, err := unix.PerfEventOpen(attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if errors.Is(err, unix.ENOSPC) {
		return nil, errors.New("No more HW registers left")
	}
	if err != nil {
		return nil, fmt.Errorf("perf_event_open breakpoint (cpu %d, thread %d): %w", cpu, tid, err)
	}
	l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
	unix.Close(fd) // the link holds the event
	return l, err
}

// threads lists the thread ids of process pid.
func threads(pid int) ([]int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, fmt.Errorf("threads of process %d: %w", pid, err)
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

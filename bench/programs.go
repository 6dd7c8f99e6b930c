package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// enableStats turns on the kernel's accounting of BPF program run time
// and run count, through a BPF_ENABLE_STATS fd rather than the sysctl:
// closing the fd restores the previous state, even if the benchmark dies.
func enableStats() (func(), error) {
	fd, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		return nil, fmt.Errorf("enable BPF stats: %w", err)
	}
	return func() { fd.Close() }, nil
}

// programs are the probe programs one process holds, found by the
// prog_id of its file descriptors (program and link fds both carry one),
// so that programs of other processes on the machine are not counted.
type programs struct {
	pid int
	// byID holds every program seen: nil for one of another type.
	byID map[ebpf.ProgramID]*ebpf.Program
}

// probeTypes are the program types the measured probes compile to:
// perf-event tracepoints in bpftrace, and in gtrace too unless they are
// many syscall tracepoints, which gtrace fuses into raw tracepoint
// programs on raw_syscalls; and kprobe-type programs for uprobes. The
// scripts measured have no BEGIN or END, whose programs would also be
// raw tracepoints in gtrace.
var probeTypes = []ebpf.ProgramType{ebpf.TracePoint, ebpf.RawTracepoint, ebpf.Tracing, ebpf.Kprobe}

func newPrograms(pid int) *programs {
	return &programs{pid: pid, byID: map[ebpf.ProgramID]*ebpf.Program{}}
}

// refresh opens the probe programs the process has come to hold.
func (ps *programs) refresh() error {
	dir := fmt.Sprintf("/proc/%d/fdinfo", ps.pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list file descriptors: %w", err)
	}
	for _, e := range entries {
		id, ok := progID(filepath.Join(dir, e.Name()))
		if !ok {
			continue
		}
		if _, seen := ps.byID[id]; seen {
			continue
		}
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // closed since: it will not run again
		}
		if !slices.Contains(probeTypes, p.Type()) {
			p.Close()
			p = nil
		}
		ps.byID[id] = p
	}
	return nil
}

// progID reads the prog_id line of a file descriptor's fdinfo.
func progID(fdinfo string) (ebpf.ProgramID, bool) {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return 0, false // the fd was closed meanwhile
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("prog_id:")); ok {
			id, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 32)
			return ebpf.ProgramID(id), err == nil
		}
	}
	return 0, false
}

// stats returns the run count and run time of each program.
func (ps *programs) stats() (map[ebpf.ProgramID]*ebpf.ProgramStats, error) {
	out := map[ebpf.ProgramID]*ebpf.ProgramStats{}
	for id, p := range ps.byID {
		if p == nil {
			continue
		}
		s, err := p.Stats()
		if err != nil {
			return nil, fmt.Errorf("stats of program %d: %w", id, err)
		}
		out[id] = s
	}
	return out, nil
}

// list returns the probe programs.
func (ps *programs) list() []*ebpf.Program {
	var out []*ebpf.Program
	for _, p := range ps.byID {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

func (ps *programs) close() {
	for _, p := range ps.byID {
		if p != nil {
			p.Close()
		}
	}
}

// ran counts the programs that have run at least once. Only entry points
// count runs: gtrace's fused programs are tail-called from a dispatcher,
// and the kernel accounts their runs to it.
func ran(stats map[ebpf.ProgramID]*ebpf.ProgramStats) int {
	n := 0
	for _, s := range stats {
		if s.RunCount > 0 {
			n++
		}
	}
	return n
}

// costPerEvent divides the run time the programs spent between two
// snapshots by the events the workload fired meanwhile.
func costPerEvent(before, after map[ebpf.ProgramID]*ebpf.ProgramStats, events uint64) (float64, error) {
	if events == 0 {
		return 0, errors.New("no events: the workload did not fire the probes")
	}
	var runtime time.Duration
	for id, a := range after {
		b, ok := before[id]
		if !ok {
			return 0, fmt.Errorf("program %d appeared during the workload", id)
		}
		runtime += a.Runtime - b.Runtime
	}
	return float64(runtime.Nanoseconds()) / float64(events), nil
}

// readCounter is a program of gtbench's own on syscalls:sys_enter_read
// that does nothing: with stats enabled, its run count is the number of
// read(2) calls, the events that every event script traces. A tracer's
// own run counts would not do: gtrace's syscall dispatcher runs for every
// system call, and its tail-called programs have no count of their own.
type readCounter struct {
	prog *ebpf.Program
	link link.Link
}

func newReadCounter() (*readCounter, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "gtbench_reads", Type: ebpf.TracePoint, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		return nil, fmt.Errorf("load read counter: %w", err)
	}
	l, err := link.Tracepoint("syscalls", "sys_enter_read", prog, nil)
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("attach read counter: %w", err)
	}
	return &readCounter{prog: prog, link: l}, nil
}

// count returns how many reads the counter has seen.
func (c *readCounter) count() (uint64, error) {
	s, err := c.prog.Stats()
	if err != nil {
		return 0, fmt.Errorf("read counter stats: %w", err)
	}
	return s.RunCount, nil
}

func (c *readCounter) close() {
	c.link.Close()
	c.prog.Close()
}

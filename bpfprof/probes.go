package bpfprof

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// reading is struct bpf_perf_event_value: a counter, and how long it was
// enabled and running, which differ when counters are multiplexed.
type reading struct {
	Counter, Enabled, Running uint64
}

// totals is the value of the per-CPU totals map: runs seen at exit, the
// time between entry and exit summed, and each counter's deltas summed.
type totals struct {
	Runs, TimeNs uint64
	Counters     [maxCounters]reading
}

// Offsets in the map values, for the BPF programs. The per-CPU start
// map holds the time at entry, then each counter's reading at entry; the
// totals map holds a totals. A reading is 24 bytes.
const (
	startTime     = 0
	startCounters = 8
	startSize     = startCounters + maxCounters*24

	totalRuns     = 0
	totalTime     = 8
	totalCounters = 16
)

// probes are the fentry and fexit programs attached to a target.
type probes struct {
	start, totals, events *ebpf.Map
	entry, exit           *ebpf.Program
	links                 []link.Link
}

// targetFunc is the name of the target's first function, which fentry
// attaches to; it needs the target's BTF function information.
func targetFunc(target *ebpf.Program) (string, error) {
	info, err := target.Info()
	if err != nil {
		return "", fmt.Errorf("program info: %w", err)
	}
	funcs, err := info.FuncInfos()
	if err != nil || len(funcs) == 0 || funcs[0].Func == nil {
		return "", errors.New("the program has no BTF function information")
	}
	return funcs[0].Func.Name, nil
}

// attachProbes loads the fentry and fexit programs for target, fills
// the counters' events, and attaches both through BPF links, which go
// away with gtrace however it exits.
func attachProbes(target *ebpf.Program, ev *perfEvents, ncpu int) (_ *probes, err error) {
	fn, err := targetFunc(target)
	if err != nil {
		return nil, err
	}
	p := &probes{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.start, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: startSize, MaxEntries: 1}); err != nil {
		return nil, fmt.Errorf("create start map: %w", err)
	}
	if p.totals, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4,
		ValueSize: uint32(binary.Size(totals{})), MaxEntries: 1}); err != nil {
		return nil, fmt.Errorf("create totals map: %w", err)
	}
	if len(ev.counters) > 0 {
		if p.events, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerfEventArray, KeySize: 4, ValueSize: 4,
			MaxEntries: uint32(len(ev.counters) * ncpu)}); err != nil {
			return nil, fmt.Errorf("create perf event map: %w", err)
		}
		for i, fds := range ev.fds {
			for cpu, fd := range fds {
				if fd < 0 {
					continue
				}
				if err := p.events.Put(uint32(i*ncpu+cpu), uint32(fd)); err != nil {
					return nil, fmt.Errorf("add %s counter of CPU %d: %w", ev.counters[i].name, cpu, err)
				}
			}
		}
	}
	load := func(name string, at ebpf.AttachType, insns asm.Instructions) (*ebpf.Program, error) {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: ebpf.Tracing, AttachType: at,
			AttachTarget: target, AttachTo: fn, Instructions: insns, License: "GPL"})
		if errors.Is(err, unix.EPERM) {
			// Not a locked-memory limit, which cilium/ebpf's message
			// suggests: the kernel refuses tracing programs.
			return nil, fmt.Errorf("the kernel refused the %s program on %s: %w", name, fn, unix.EPERM)
		}
		if err != nil {
			return nil, fmt.Errorf("load %s program on %s: %w", name, fn, err)
		}
		return prog, nil
	}
	n := len(ev.counters)
	if p.entry, err = load("gtrace_prof_in", ebpf.AttachTraceFEntry, entryInsns(p.start, p.events, n, ncpu)); err != nil {
		return nil, err
	}
	if p.exit, err = load("gtrace_prof_out", ebpf.AttachTraceFExit, exitInsns(p.start, p.totals, p.events, n, ncpu)); err != nil {
		return nil, err
	}
	// fexit first: a run entered before fentry attached has no start
	// time and is not counted.
	for _, prog := range []*ebpf.Program{p.exit, p.entry} {
		l, err := link.AttachTracing(link.TracingOptions{Program: prog})
		if err != nil {
			return nil, fmt.Errorf("attach to %s: %w", fn, err)
		}
		p.links = append(p.links, l)
	}
	return p, nil
}

// close detaches and unloads what attachProbes made, as far as it got.
func (p *probes) close() {
	for _, l := range p.links {
		l.Close()
	}
	for _, prog := range []*ebpf.Program{p.entry, p.exit} {
		if prog != nil {
			prog.Close()
		}
	}
	for _, m := range []*ebpf.Map{p.start, p.totals, p.events} {
		if m != nil {
			m.Close()
		}
	}
}

// read sums the totals over all CPUs.
func (p *probes) read() (totals, error) {
	var perCPU []totals
	if err := p.totals.Lookup(uint32(0), &perCPU); err != nil {
		return totals{}, fmt.Errorf("read fentry/fexit totals: %w", err)
	}
	var sum totals
	for _, t := range perCPU {
		sum.Runs += t.Runs
		sum.TimeNs += t.TimeNs
		for i := range sum.Counters {
			sum.Counters[i].Counter += t.Counters[i].Counter
			sum.Counters[i].Enabled += t.Counters[i].Enabled
			sum.Counters[i].Running += t.Counters[i].Running
		}
	}
	return sum, nil
}

// stats reads the kernel's statistics of the fentry and fexit programs.
func (p *probes) stats() (entry, exit ebpf.ProgramStats, err error) {
	in, err := p.entry.Stats()
	if err != nil {
		return entry, exit, fmt.Errorf("read fentry statistics: %w", err)
	}
	out, err := p.exit.Stats()
	if err != nil {
		return entry, exit, fmt.Errorf("read fexit statistics: %w", err)
	}
	return *in, *out, nil
}

// lookupZero puts the key 0 on the stack, at fp-4, and the map lookup's
// arguments in R1 and R2.
func lookupZero(m *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.R10, -4, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
	}
}

// readCounter reads counter i of this CPU into the memory at base+off.
func readCounter(events *ebpf.Map, i, ncpu int, base asm.Register, off int32) asm.Instructions {
	return asm.Instructions{
		asm.FnGetSmpProcessorId.Call(),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Add.Imm(asm.R2, int32(i*ncpu)),
		asm.LoadMapPtr(asm.R1, events.FD()),
		asm.Mov.Reg(asm.R3, base),
		asm.Add.Imm(asm.R3, off),
		asm.Mov.Imm(asm.R4, 24),
		asm.FnPerfEventReadValue.Call(),
	}
}

// entryInsns is the fentry program: it reads the counters into this
// CPU's start slot, then the time, last, so that its own cost falls
// outside the run it measures.
func entryInsns(start, events *ebpf.Map, n, ncpu int) asm.Instructions {
	insns := lookupZero(start)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "done"),
		asm.Mov.Reg(asm.R6, asm.R0))
	for i := range n {
		insns = append(insns, readCounter(events, i, ncpu, asm.R6, int32(startCounters+24*i))...)
	}
	return append(insns,
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R6, startTime, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return())
}

// exitInsns is the fexit program: it takes the time first, then adds
// the run, its time and its counter deltas to this CPU's totals. A run
// without a start time, one entered before fentry attached, is left out.
func exitInsns(start, tot, events *ebpf.Map, n, ncpu int) asm.Instructions {
	insns := asm.Instructions{
		asm.FnKtimeGetNs.Call(),
		asm.Mov.Reg(asm.R8, asm.R0),
	}
	insns = append(insns, lookupZero(start)...)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "done"),
		asm.Mov.Reg(asm.R6, asm.R0))
	insns = append(insns, lookupZero(tot)...)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "done"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadMem(asm.R1, asm.R6, startTime, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "done"),
		asm.Sub.Reg(asm.R8, asm.R1),
		// Pair each exit with one entry.
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.R6, startTime, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R7, totalRuns, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R7, totalRuns, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R7, totalTime, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R8),
		asm.StoreMem(asm.R7, totalTime, asm.R1, asm.DWord),
	)
	for i := range n {
		skip := fmt.Sprintf("counter%d", i+1)
		if i == n-1 {
			skip = "done"
		}
		at := int16(startCounters + 24*i)
		block := asm.Instructions{
			// An entry reading that failed left zeros.
			asm.LoadMem(asm.R1, asm.R6, at+8, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, skip),
		}
		block = append(block, readCounter(events, i, ncpu, asm.R10, -32)...)
		block = append(block, asm.JNE.Imm(asm.R0, 0, skip))
		for k := int16(0); k < 3; k++ {
			block = append(block,
				asm.LoadMem(asm.R1, asm.R10, -32+8*k, asm.DWord),
				asm.LoadMem(asm.R2, asm.R6, at+8*k, asm.DWord),
				asm.Sub.Reg(asm.R1, asm.R2),
				asm.LoadMem(asm.R2, asm.R7, int16(totalCounters+24*i)+8*k, asm.DWord),
				asm.Add.Reg(asm.R2, asm.R1),
				asm.StoreMem(asm.R7, int16(totalCounters+24*i)+8*k, asm.R2, asm.DWord))
		}
		if i > 0 {
			block[0] = block[0].WithSymbol(fmt.Sprintf("counter%d", i))
		}
		insns = append(insns, block...)
	}
	return append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("done"),
		asm.Return())
}

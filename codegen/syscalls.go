package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"gtrace/kernel"
	"gtrace/probe"
	"gtrace/sema"
)

// Syscall tracepoints run fused into raw_syscalls (probe.Probe.Fused): a
// dispatcher program on raw_syscalls:sys_enter, and one on sys_exit,
// tail-calls the program of the syscall's number through a program
// array. Several probes on one syscall form a chain: each program ends
// by tail-calling the next.

// The program array of fusion and its layout.
const (
	mapSyscalls = "syscalls" // program array: fused programs by slot
	// syscallSlots is the number of slots indexed by syscall number:
	// entry programs at the number, exit programs at half the slots
	// plus the number. Chained programs take the slots after them.
	syscallSlots = 1024
)

// Offsets in x86_64's struct pt_regs of the six syscall arguments and of
// orig_ax, the syscall number at exit.
var (
	syscallArgRegs = [6]int32{112, 104, 96, 56, 72, 64} // di, si, dx, r10, r8, r9
	ptRegsOrigAX   = int32(120)
)

// syscallField reads an args field of a fused syscall probe into R0. A
// raw_syscalls program's context is {struct pt_regs *regs, long id} at
// entry and {regs, long ret} at exit.
func (g *gen) syscallField(f *sema.ArgField) {
	switch f.From {
	case sema.SyscallNr:
		g.loadImm(asm.R0, int64(g.prog.Probe.Fused.Nr))
		return
	case sema.SyscallRet:
		g.emit(asm.LoadMem(asm.R0, regCtx, 8, asm.DWord))
		return
	}
	if f.Arg >= len(syscallArgRegs) {
		g.fail(nil, "args.%s: syscalls have at most six arguments", f.Name)
		return
	}
	g.emit(readSavedReg(regCtx, syscallArgRegs[f.Arg], asm.R0)...)
	g.truncate(f.Type)
}

// readSavedReg reads into dst the register saved at offset off of the
// struct pt_regs that a raw_syscalls context (in ctx) points to, through
// the spare stack slot at -8; 0 if the read fails.
func readSavedReg(ctx asm.Register, off int32, dst asm.Register) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R3, ctx, 0, asm.DWord),
		asm.Add.Imm(asm.R3, off),
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(dst, asm.RFP, -8, asm.DWord),
	}
}

// chainNext ends a fused program: tail-call the next program on the same
// syscall, if there is one. A tail call that fails falls through.
func (g *gen) chainNext() {
	if g.next < 0 {
		return
	}
	g.emit(
		asm.Mov.Reg(asm.R1, regCtx),
		asm.LoadMapPtr(asm.R2, 0).WithReference(mapSyscalls),
		asm.Mov.Imm(asm.R3, int32(g.next)),
		asm.FnTailCall.Call(),
	)
}

// fuse assigns the fused programs their slots and chains, and adds the
// program array and the dispatchers to out. It returns each program's
// next slot in its chain, -1 at a chain's end.
func fuse(out *Output, progs []*sema.Prog) map[int]int {
	next := map[int]int{}
	last := map[[2]int]int{} // (nr, exit) -> index of the chain's last program
	extra := syscallSlots
	var exits [2]bool
	for i, p := range progs {
		next[i] = -1
		sc := p.Probe.Fused
		if sc == nil {
			continue
		}
		x := 0
		if sc.Exit {
			x = 1
		}
		exits[x] = true
		key := [2]int{sc.Nr, x}
		slot := sc.Nr + x*syscallSlots/2
		if prev, ok := last[key]; ok {
			slot = extra
			extra++
			next[prev] = slot
		}
		last[key] = i
		out.Slots[fmt.Sprintf("p%d", i)] = slot
	}
	if len(out.Slots) == 0 {
		return next
	}
	out.Spec.Maps[mapSyscalls] = &ebpf.MapSpec{Name: mapSyscalls, Type: ebpf.ProgramArray,
		KeySize: 4, ValueSize: 4, MaxEntries: uint32(extra)}
	for x, used := range exits {
		if used {
			addDispatcher(out, x == 1, len(progs)+x)
		}
	}
	return next
}

// tsCompat is x86's flag in thread_info.status of a task in an ia32
// system call.
const tsCompat = 0x0002

// threadStatus finds the offset of thread_info.status in the kernel's
// task_struct, from its BTF. There is none where the kernel has no BTF or
// no such field, as off x86.
func threadStatus() (int16, bool) {
	t, err := kernel.KernelType("struct task_struct")
	if err != nil {
		return 0, false
	}
	for _, m := range t.(*btf.Struct).Members {
		info, ok := m.Type.(*btf.Struct)
		if m.Name != "thread_info" || !ok {
			continue
		}
		for _, f := range info.Members {
			if size, err := btf.Sizeof(f.Type); f.Name == "status" && err == nil && size == 4 {
				return int16((m.Offset + f.Offset).Bytes()), true
			}
		}
	}
	return 0, false
}

// addDispatcher adds the program on raw_syscalls:sys_enter or sys_exit
// that tail-calls the fused program of the syscall's number. Exit slots
// follow the entry slots.
func addDispatcher(out *Output, exit bool, stopSlot int) {
	event, base := "sys_enter", int32(0)
	if exit {
		event, base = "sys_exit", syscallSlots/2
	}
	done := "done"
	insns := asm.Instructions{
		btf.WithFuncMetadata(asm.Mov.Reg(asm.R6, asm.R1), funcInfo("rawtracepoint:"+event)),
	}
	insns = append(insns, stopCheck(int32(stopSlot), "running", done)...)
	running := len(insns)
	if off, ok := threadStatus(); ok {
		// An ia32 system call carries its own number, which the syscall
		// tracepoints ignore (arch_trace_is_compat_syscall): so do the
		// dispatchers.
		insns = append(insns,
			asm.FnGetCurrentTaskBtf.Call(),
			asm.LoadMem(asm.R1, asm.R0, off, asm.Word),
			asm.JSet.Imm(asm.R1, tsCompat, done),
		)
	}
	if exit {
		// sys_exit has no number among its arguments: regs->orig_ax.
		insns = append(insns, readSavedReg(asm.R6, ptRegsOrigAX, asm.R3)...)
	} else {
		insns = append(insns, asm.LoadMem(asm.R3, asm.R6, 8, asm.DWord))
	}
	insns = append(insns,
		asm.JGE.Imm(asm.R3, syscallSlots/2, done),
		asm.Add.Imm(asm.R3, base),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, 0).WithReference(mapSyscalls),
		asm.FnTailCall.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(done),
		asm.Return(),
	)
	insns[running] = insns[running].WithSymbol("running")
	name := "sys_enter"
	if exit {
		name = "sys_exit"
	}
	out.Spec.Programs[name] = &ebpf.ProgramSpec{Name: name, Type: ebpf.RawTracepoint,
		Instructions: insns, License: out.Settings.License}
	out.Dispatchers = append(out.Dispatchers, &Program{Name: name, StopSlot: stopSlot,
		Prog: &sema.Prog{Probe: probe.Probe{Kind: probe.RawTracepoint, Name: "rawtracepoint:" + event, Event: event}}})
}

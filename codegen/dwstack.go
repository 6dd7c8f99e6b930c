package codegen

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/probe"
	"gtrace/sema"
)

// dw_ustack() unwinds the user stack in BPF by the DWARF call frame
// information that user space reads from the target processes' files
// (package symbol/unwind) into two maps: DwPidsMap gives each process
// the range of its rows in DwRowsMap, which are sorted by address. A
// bpf_loop callback records one frame per iteration: it finds the row
// of the current pc by binary search, computes the canonical frame
// address from it, and reads the return address and the saved rbp from
// the user stack.
//
// The frames are kept in DwStacksMap under a hash of them, and the value
// is laid out as ustack's: the id, with DwStackMark telling it from a
// stack map's, and the frame count in the upper half, then the pid.

// The maps of dw_ustack().
const (
	DwPidsMap   = "dw_pids"
	DwRowsMap   = "dw_rows"
	DwStacksMap = "dw_stacks"
)

// DwStackMark is set in the id of a stack that dw_ustack() recorded in
// DwStacksMap: the kernel's stack map ids stay far below it.
const DwStackMark = 1 << 30

// DwRowSize is the size of a row of DwRowsMap: its address (u64), the
// CFA offset (s32), rbp's offset from the CFA (s16, 0 when unchanged)
// and the unwind.Kind (u8).
const DwRowSize = 16

// DwPidSize is the size of a DwPidsMap value: the index of the
// process's first row (u32) and its number of rows (u32).
const DwPidSize = 8

// dwFrames is the size of a DwStacksMap value, in frames: the most a
// stack has, then room for the 0 that ends a shorter one.
const dwFrames = maxStackDepth + 1

// dwSearchSteps bounds the binary search for a row: 2^24 rows.
const dwSearchSteps = 24

// dwNoDWARF is the warning of a dw_ustack() in a process with no rows.
const dwNoDWARF = "No DWARF unwind data available for this process. Use -p or --dwarf-pid to specify target PIDs."

// More pt_regs offsets on x86-64, after ptRegsIP.
const (
	ptRegsBP   = 32
	ptRegsSP   = 152
	ptRegsSize = 168
)

// The unwinder's state in scratch, by word.
const (
	dwPC = iota * 8
	dwSP
	dwBP
	dwFirst // the process's first row
	dwEnd   // and the one past its last
	dwCount // frames recorded
	dwHash
	dwAddr // the address whose row is searched
	dwLo
	dwHi
	dwCFA
	dwRow // the row found: CFA offset, rbp offset, kind
	dwTmp // what a read from the user stack returns
	dwFramesOff
)

// dwUserStack stores the user stack of type t unwound by DWARF at dst,
// laid out as userStack's.
func (g *gen) dwUserStack(t *sema.Type, e ast.Node, dst int) {
	if g.prog.Probe.Context() == probe.NoContext {
		g.emit(asm.Mov.Imm(asm.R0, -1))
		g.storeUserStack(dst)
		return
	}
	g.dwMaps()
	_, depth, _ := StackMap(t)
	st := g.alloc(dwFramesOff + 8*dwFrames)
	done, none, found := g.newLabel(), g.newLabel(), g.newLabel()

	// The process's rows, or a warning and no stack.
	g.pidTid(false, false)
	g.emit(
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(DwPidsMap),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JNE.Imm(asm.R0, 0, found),
	)
	g.event(&Event{Kind: EvWarning, Format: dwNoDWARF, At: e.Span()}, nil)
	g.emit(asm.Ja.Label(none))
	g.place(found)
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.StoreMem(regScratch, int16(st+dwFirst), asm.R1, asm.DWord),
		asm.LoadMem(asm.R2, asm.R0, 4, asm.Word),
		asm.Add.Reg(asm.R2, asm.R1),
		asm.StoreMem(regScratch, int16(st+dwEnd), asm.R2, asm.DWord),
	)
	g.dwUserRegs(st)
	g.loadImm(asm.R1, fnvOffset)
	g.emit(
		asm.StoreMem(regScratch, int16(st+dwHash), asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(regScratch, int16(st+dwCount), asm.R1, asm.DWord),
	)

	sym := fmt.Sprintf("dwunwind%d", g.labels)
	g.labels++
	g.callback(sym, []string{"index", "ctx"}, asm.R2, false, func() {}, func(next, stop, _ string) {
		g.dwStep(st, depth, next, stop)
	})
	g.emit(asm.Mov.Imm(asm.R1, int32(depth)))
	g.callHelper(asm.FnLoop, sym)

	// End the frames with a 0, keep them under their hash, and leave the
	// id, with the count above it, in R0.
	g.emit(
		asm.LoadMem(asm.R1, regScratch, int16(st+dwCount), asm.DWord),
		asm.JGT.Imm(asm.R1, maxStackDepth, none),
		asm.LSh.Imm(asm.R1, 3),
		asm.Add.Reg(asm.R1, regScratch),
		asm.Mov.Imm(asm.R2, 0),
		asm.StoreMem(asm.R1, int16(st+dwFramesOff), asm.R2, asm.DWord),
		asm.LoadMem(asm.R1, regScratch, int16(st+dwHash), asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R1), asm.RSh.Imm(asm.R2, 32), asm.Xor.Reg(asm.R1, asm.R2),
		asm.And.Imm(asm.R1, DwStackMark-1), asm.Or.Imm(asm.R1, DwStackMark),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(DwStacksMap),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -8),
	)
	g.scratchPtr(asm.R3, st+dwFramesOff)
	g.emit(
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
		asm.LoadMem(asm.R0, asm.RFP, -8, asm.Word),
		asm.LoadMem(asm.R1, regScratch, int16(st+dwCount), asm.DWord),
		asm.LSh.Imm(asm.R1, 32),
		asm.Or.Reg(asm.R0, asm.R1),
		asm.Ja.Label(done),
	)
	g.place(none)
	g.emit(asm.Mov.Imm(asm.R0, -1))
	g.place(done)
	g.storeUserStack(dst)
}

// dwUserRegs puts the user's pc, sp and rbp into the state: from the
// context of a user-space probe, whose pt_regs are the user's, or else
// from the task's user registers, as bpftrace does.
func (g *gen) dwUserRegs(st int) {
	src, base := regCtx, 0
	if !g.prog.Probe.UserSpace() {
		regs := g.alloc(ptRegsSize)
		g.emit(
			asm.FnGetCurrentTaskBtf.Call(),
			asm.Mov.Reg(asm.R1, asm.R0),
			asm.FnTaskPtRegs.Call(),
			asm.Mov.Reg(asm.R3, asm.R0),
			asm.Mov.Imm(asm.R2, ptRegsSize),
		)
		g.scratchPtr(asm.R1, regs)
		g.emit(asm.FnProbeReadKernel.Call())
		src, base = regScratch, regs
	}
	for _, r := range []struct{ from, to int }{{ptRegsIP, dwPC}, {ptRegsSP, dwSP}, {ptRegsBP, dwBP}} {
		g.emit(
			asm.LoadMem(asm.R1, src, int16(base+r.from), asm.DWord),
			asm.StoreMem(regScratch, int16(st+r.to), asm.R1, asm.DWord),
		)
	}
}

// FNV-1a's 64-bit parameters, which hash the frames.
const (
	fnvOffset = -3750763034362895579 // 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// dwStep is the body of the unwinding callback: it records the current
// pc as a frame, then moves pc, sp and rbp to the caller's, or stops.
func (g *gen) dwStep(st, depth int, next, stop string) {
	s := func(word int) int16 { return int16(st + word) }
	load := func(r asm.Register, word int) asm.Instruction {
		return asm.LoadMem(r, regScratch, s(word), asm.DWord)
	}
	store := func(word int, r asm.Register) asm.Instruction {
		return asm.StoreMem(regScratch, s(word), r, asm.DWord)
	}
	// Record the frame and hash it in.
	g.emit(
		load(asm.R1, dwCount),
		asm.JGE.Imm(asm.R1, int32(depth), stop),
		load(asm.R2, dwPC),
		asm.Mov.Reg(asm.R3, asm.R1), asm.LSh.Imm(asm.R3, 3), asm.Add.Reg(asm.R3, regScratch),
		asm.StoreMem(asm.R3, s(dwFramesOff), asm.R2, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		store(dwCount, asm.R1),
		load(asm.R3, dwHash),
		asm.Xor.Reg(asm.R3, asm.R2),
	)
	g.loadImm(asm.R4, fnvPrime)
	first := g.newLabel()
	g.emit(
		asm.Mul.Reg(asm.R3, asm.R4),
		store(dwHash, asm.R3),
		// A caller's pc is its return address: the call is the byte
		// before, which may end the function.
		asm.JEq.Imm(asm.R1, 1, first),
		asm.Sub.Imm(asm.R2, 1),
	)
	g.place(first)
	g.emit(
		store(dwAddr, asm.R2),
		load(asm.R1, dwFirst), store(dwLo, asm.R1),
		load(asm.R1, dwEnd), store(dwHi, asm.R1),
		asm.Mov.Imm(asm.R7, 0),
	)
	// Binary search for the last row at or below the address.
	search, searched, right := g.newLabel(), g.newLabel(), g.newLabel()
	g.place(search)
	g.emit(
		asm.JGE.Imm(asm.R7, dwSearchSteps, searched),
		load(asm.R1, dwLo), load(asm.R2, dwHi),
		asm.JGE.Reg(asm.R1, asm.R2, searched),
		asm.Add.Reg(asm.R1, asm.R2), asm.RSh.Imm(asm.R1, 1),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
	)
	g.dwLookupRow(stop)
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		load(asm.R2, dwAddr),
		asm.LoadMem(asm.R3, asm.RFP, -8, asm.Word),
		asm.Add.Imm(asm.R7, 1),
		asm.JLE.Reg(asm.R1, asm.R2, right),
		store(dwHi, asm.R3),
		asm.Ja.Label(search),
	)
	g.place(right)
	g.emit(
		asm.Add.Imm(asm.R3, 1),
		store(dwLo, asm.R3),
		asm.Ja.Label(search),
	)
	g.place(searched)
	g.emit(
		load(asm.R1, dwLo), load(asm.R2, dwFirst),
		asm.JLE.Reg(asm.R1, asm.R2, stop),
		asm.Sub.Imm(asm.R1, 1),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
	)
	g.dwLookupRow(stop)
	// The canonical frame address, by the row's kind.
	rsp, rbp, cfa := g.newLabel(), g.newLabel(), g.newLabel()
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
		store(dwRow, asm.R1),
		asm.LoadMem(asm.R2, asm.R0, 8, asm.Word),
		asm.LSh.Imm(asm.R2, 32), asm.ArSh.Imm(asm.R2, 32),
		asm.LoadMem(asm.R3, asm.R0, 14, asm.Byte),
		asm.JEq.Imm(asm.R3, 1, rsp),
		asm.JEq.Imm(asm.R3, 2, rbp),
		asm.JNE.Imm(asm.R3, 3, stop),
		// *(rbp + offset), after a stack realignment.
		load(asm.R3, dwBP), asm.Add.Reg(asm.R3, asm.R2),
	)
	g.dwReadUser(st, stop)
	g.emit(load(asm.R1, dwTmp), asm.Ja.Label(cfa))
	g.place(rsp)
	g.emit(load(asm.R1, dwSP), asm.Add.Reg(asm.R1, asm.R2), asm.Ja.Label(cfa))
	g.place(rbp)
	g.emit(load(asm.R1, dwBP), asm.Add.Reg(asm.R1, asm.R2))
	g.place(cfa)
	// The stack unwinds upwards: a CFA at or below sp is garbage, and
	// would loop.
	g.emit(
		load(asm.R2, dwSP),
		asm.JLE.Reg(asm.R1, asm.R2, stop),
		store(dwCFA, asm.R1),
		asm.Mov.Reg(asm.R3, asm.R1), asm.Add.Imm(asm.R3, -8),
	)
	g.dwReadUser(st, stop)
	sameRBP := g.newLabel()
	g.emit(
		load(asm.R1, dwTmp),
		asm.JEq.Imm(asm.R1, 0, stop),
		store(dwPC, asm.R1),
		// rbp, where the row says it is saved.
		load(asm.R3, dwRow), asm.LSh.Imm(asm.R3, 16), asm.ArSh.Imm(asm.R3, 48),
		asm.JEq.Imm(asm.R3, 0, sameRBP),
		load(asm.R1, dwCFA), asm.Add.Reg(asm.R3, asm.R1),
	)
	g.dwReadUser(st, stop)
	g.emit(load(asm.R1, dwTmp), store(dwBP, asm.R1))
	g.place(sameRBP)
	g.emit(load(asm.R1, dwCFA), store(dwSP, asm.R1), asm.Ja.Label(next))
}

// dwLookupRow leaves in R0 the row whose index is at RFP-8, or jumps to
// stop.
func (g *gen) dwLookupRow(stop string) {
	g.emit(
		asm.LoadMapPtr(asm.R1, 0).WithReference(DwRowsMap),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, stop),
	)
}

// dwReadUser reads the user word at the address in R3 into dwTmp of
// the state at st, or jumps to stop.
func (g *gen) dwReadUser(st int, stop string) {
	g.emit(asm.Mov.Imm(asm.R2, 8))
	g.scratchPtr(asm.R1, st+dwTmp)
	g.emit(
		asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, stop),
	)
}

// dwMaps adds dw_ustack()'s maps to the collection, once. User space
// sizes the rows and processes to the target processes' tables.
func (g *gen) dwMaps() {
	if g.out.stackMaps[DwStacksMap] != nil {
		return
	}
	if g.out.stackMaps == nil {
		g.out.stackMaps = map[string]*ebpf.MapSpec{}
	}
	g.out.stackMaps[DwStacksMap] = &ebpf.MapSpec{Name: DwStacksMap, Type: ebpf.Hash, KeySize: 4,
		ValueSize: 8 * dwFrames, MaxEntries: uint32(g.info.Config.MaxMapKeys)}
	g.out.stackMaps[DwPidsMap] = &ebpf.MapSpec{Name: DwPidsMap, Type: ebpf.Hash, KeySize: 4,
		ValueSize: DwPidSize, MaxEntries: 1}
	g.out.stackMaps[DwRowsMap] = &ebpf.MapSpec{Name: DwRowsMap, Type: ebpf.Array, KeySize: 4,
		ValueSize: DwRowSize, MaxEntries: 1}
}

package codegen

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/probe"
	"gtrace/sema"
)

// maxStackDepth is the most frames a stack map keeps, the kernel's
// default perf_event_max_stack.
const maxStackDepth = 127

// BuildIDFrameSize is the size of a frame of a build-id stack, struct
// bpf_stack_build_id: status, build id, then the file offset (or the
// address, when the file has no build id).
const BuildIDFrameSize = 32

// userStackFlag asks bpf_get_stackid for the user stack.
const userStackFlag = 1 << 8

// stackBuildIDFlag makes a stack map keep build ids and file offsets
// (BPF_F_STACK_BUILD_ID).
const stackBuildIDFlag = 1 << 5

// StackMap names the stack map a stack of type t is recorded in, and
// says how many frames it keeps and whether they are build ids. Each
// limit has its own map, so that stacks alike in their first frames
// have one id, as equal keys of a map.
func StackMap(t *sema.Type) (name string, depth int, buildID bool) {
	depth = maxStackDepth
	if t.Len > 0 {
		depth = min(t.Len, maxStackDepth)
	}
	buildID = t.Format == "build_id"
	switch {
	case buildID:
		name = fmt.Sprintf("bstacks_%d", depth)
	case depth == maxStackDepth:
		name = "stacks"
	default:
		name = fmt.Sprintf("stacks_%d", depth)
	}
	return name, depth, buildID
}

// stackID records the current kernel or user stack of type t and
// leaves its id in R0, or -1 where there is none to speak of (BEGIN
// and END).
func (g *gen) stackID(t *sema.Type, flags int32) {
	if g.prog.Probe.Context() == probe.NoContext {
		g.emit(asm.Mov.Imm(asm.R0, -1))
		return
	}
	name := g.stackMap(t)
	g.emit(
		asm.Mov.Reg(asm.R1, regCtx),
		asm.LoadMapPtr(asm.R2, 0).WithReference(name),
		asm.Mov.Imm(asm.R3, flags),
		asm.FnGetStackid.Call(),
	)
	if g.info.StackLens {
		g.countFrames(t, flags)
	}
}

// countFrames puts the number of frames of the current stack in the
// upper half of the stack id in R0, where len() finds it: the frames,
// up to the stack's limit, are copied into scratch to be counted.
func (g *gen) countFrames(t *sema.Type, flags int32) {
	_, depth, _ := StackMap(t)
	slot := g.pushSlot()
	defer g.popSlot()
	buf := g.alloc(8 * depth)
	counted := g.newLabel()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, regCtx))
	g.scratchPtr(asm.R2, buf)
	g.emit(
		asm.Mov.Imm(asm.R3, int32(8*depth)),
		asm.Mov.Imm(asm.R4, flags),
		asm.FnGetStack.Call(),
		asm.JSGE.Imm(asm.R0, 0, counted),
		asm.Mov.Imm(asm.R0, 0),
	)
	g.place(counted)
	g.emit(
		asm.RSh.Imm(asm.R0, 3), asm.LSh.Imm(asm.R0, 32),
		asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord),
		asm.LSh.Imm(asm.R1, 32), asm.RSh.Imm(asm.R1, 32),
		asm.Or.Reg(asm.R0, asm.R1),
	)
}

// stackLen sets R0 to the number of frames of stack value e, which
// countFrames left in the upper half of its first word.
func (g *gen) stackLen(e ast.Expr) {
	if g.typ(e).Kind == sema.KStack {
		g.scalar(e)
	} else {
		off := g.composite(e, -1)
		g.emit(asm.LoadMem(asm.R0, regScratch, int16(off), asm.DWord))
	}
	g.emit(asm.RSh.Imm(asm.R0, 32))
}

// stackMap adds the stack map of type t to the collection, once, and
// returns its name.
func (g *gen) stackMap(t *sema.Type) string {
	name, depth, buildID := StackMap(t)
	if g.out.stackMaps[name] != nil {
		return name
	}
	spec := &ebpf.MapSpec{Name: name, Type: ebpf.StackTrace, KeySize: 4,
		ValueSize: uint32(8 * depth), MaxEntries: uint32(g.info.Config.MaxMapKeys)}
	if buildID {
		spec.ValueSize, spec.Flags = uint32(BuildIDFrameSize*depth), stackBuildIDFlag
	}
	if g.out.stackMaps == nil {
		g.out.stackMaps = map[string]*ebpf.MapSpec{}
	}
	g.out.stackMaps[name] = spec
	return name
}

// userStack stores a user stack of type t at dst: its id, then the
// process id, which user space needs to symbolize it. Where addresses
// are symbolized by binary, the program's index (plus one) follows, so
// that the stack of a process gone by then still finds its binary.
func (g *gen) userStack(t *sema.Type, dst int) {
	g.stackID(t, userStackFlag)
	g.storeUserStack(dst)
}

// storeUserStack stores the stack id in R0 at dst, then the pid and,
// where addresses are symbolized by binary, the program's index.
func (g *gen) storeUserStack(dst int) {
	g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord))
	g.storePid(dst + 8)
	if g.prog.Probe.Target != "" && PerProgramSymbols(g.info.Config.Settings) {
		g.emit(asm.StoreImm(regScratch, int16(dst+12), int64(g.index+1), asm.Word))
	}
}

// PerProgramSymbols says whether user addresses are symbolized by the
// binary alone, as cache_user_symbols = PER_PROGRAM asks, which is also
// bpftrace's default where address space randomization is off.
func PerProgramSymbols(s sema.Settings) bool {
	return s.CacheUserSymbols == "PER_PROGRAM" || s.CacheUserSymbols == "" && !aslr()
}

// aslr says whether the kernel randomizes the address spaces of
// processes.
var aslr = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/proc/sys/kernel/randomize_va_space")
	return err != nil || strings.TrimSpace(string(b)) != "0"
})

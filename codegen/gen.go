package codegen

import (
	"fmt"
	"slices"
	"sort"

	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/lang/token"
	"gtrace/sema"
)

// Registers with a fixed role in generated code.
const (
	regCtx     = asm.R6 // the probe's context
	regMapVal  = asm.R7 // a map value pointer held across a few instructions
	regFrame   = asm.R8 // in a loop callback, the probe's frame (its R10)
	regScratch = asm.R9 // this program's scratch area
)

// Slots of the probe's frame used by loop callbacks: the saved context,
// and the flag a `return` inside a loop body raises.
const (
	slotCtx    = -16
	slotReturn = -24
)

// stackLimit is the BPF stack a program may use for integer slots.
const stackLimit = 512

// gen generates one program.
type gen struct {
	info  *sema.Info
	prog  *sema.Prog
	out   *Output
	opts  *Options
	index int

	insns   asm.Instructions
	labels  int
	pending string            // label to put on the next instruction
	aliases map[string]string // labels placed where another already was

	stack    int // bytes of BPF stack in use, below R10
	maxStack int // the most stack the main program used at once
	scratch  int // bytes of scratch in use
	largest  int // bytes of the largest value placed in scratch
	vars     map[*sema.Variable]int
	loops    []loop
	err      *diag.Error
	// exit is where return and exit() jump in the block being
	// generated, for the statements of block expressions.
	exit string
	// ret labels the program's last instruction, its return, for a
	// `return expr` whose value the program returns; "" when unused.
	ret string

	// frame holds the probe's frame pointer, where integer variables
	// live: R10 in the probe itself, regFrame in a loop callback.
	frame asm.Register
	// callbacks are the loop bodies, appended after the probe's code.
	callbacks asm.Instructions
	// joinBuf is the scratch offset of the join() record, -1 until used.
	joinBuf int
	// next is the slot of the next fused program on the same syscall,
	// -1 when there is none.
	next int
	// nameSize is set when a multi-kprobe reads its names map.
	nameSize int

	// src is where the code being generated comes from; srcPending
	// puts it on the next instruction emitted.
	src        *Source
	srcPending bool
}

type loop struct{ brk, cont string }

// fail records the first error, at n or, for nil, at the statement being
// generated; generation goes on so that the caller sees only the first.
func (g *gen) fail(n ast.Node, format string, args ...any) {
	if g.err != nil {
		return
	}
	span := token.Span{Start: token.NoPos, End: token.NoPos}
	switch {
	case n != nil:
		span = n.Span()
	case g.src != nil:
		span = g.src.Span
	}
	g.err = &diag.Error{Span: span, Msg: fmt.Sprintf(format, args...)}
}

func (g *gen) emit(ins ...asm.Instruction) {
	for _, in := range ins {
		if g.pending != "" {
			in = in.WithSymbol(g.pending)
			g.pending = ""
		}
		if g.srcPending {
			in = in.WithSource(g.src)
			g.srcPending = false
		}
		g.insns = append(g.insns, in)
	}
}

func (g *gen) newLabel() string {
	g.labels++
	return fmt.Sprintf("L%d", g.labels)
}

// place puts label on the next instruction emitted.
func (g *gen) place(label string) {
	if g.pending != "" {
		if g.aliases == nil {
			g.aliases = map[string]string{}
		}
		g.aliases[label] = g.pending
		return
	}
	g.pending = label
}

// pushSlot reserves an 8-byte stack slot and returns its offset from R10.
func (g *gen) pushSlot() int16 {
	g.stack += 8
	if g.stack > stackLimit {
		g.fail(nil, "expression too deep: out of BPF stack")
		g.stack = stackLimit
	}
	g.maxStack = max(g.maxStack, g.stack)
	return int16(-g.stack)
}

func (g *gen) popSlot() { g.stack -= 8 }

// alloc reserves n bytes of scratch, 8-byte aligned, for the program's
// whole run. Nothing is freed: offsets stay fixed so the verifier knows
// every access is in bounds.
func (g *gen) alloc(n int) int {
	off := g.scratch
	g.scratch += align8(n)
	g.largest = max(g.largest, n)
	if g.scratch > scratchSize {
		g.fail(nil, "program needs more than %d bytes of scratch space", scratchSize)
		g.scratch = 0
	}
	return off
}

// program generates the whole program.
func (g *gen) program() (asm.Instructions, *diag.Error) {
	exit := g.newLabel()
	g.frame = asm.RFP
	// Save the context and find the scratch area.
	if g.prog.Attach != nil {
		g.src = g.source(g.prog.Attach)
	}
	g.insns = append(g.insns, g.funcEntry(asm.Mov.Reg(regCtx, asm.R1), funcInfo(g.prog.Probe.Name)))
	findStart := len(g.insns)
	g.findScratch(exit)
	findEnd := len(g.insns)
	if g.prog.Probe.Fused == nil && g.prog.Probe.Attached() && g.prog.Probe.Pin == "" {
		// A fused program runs only through its dispatcher, which
		// checks the flag for it; a pinned iterator runs after gtrace
		// has stopped, when read. The check follows the scratch
		// lookup, which may be rewritten below.
		running := g.newLabel()
		g.emit(stopCheck(int32(g.index), running, exit)...)
		g.place(running)
	}
	g.unwatchedCheck(exit)
	g.stack, g.maxStack = 8, 8
	if hasLoops(g.prog.Node) {
		// Loop callbacks reach the context and the variables through
		// this frame.
		g.stack = -slotReturn
		g.emit(asm.StoreMem(asm.RFP, slotCtx, regCtx, asm.DWord))
	}
	// Variables start at zero, as in bpftrace; the verifier also refuses
	// to read a slot that a path did not write, such as a variable
	// assigned in one branch of an if.
	first := g.stack
	g.reserveVars()
	if g.stack > first {
		g.emit(asm.Mov.Imm(asm.R1, 0))
		for off := -g.stack; off < -first; off += 8 {
			g.emit(asm.StoreMem(asm.RFP, int16(off), asm.R1, asm.DWord))
		}
	}
	if g.opts.Pid != 0 && g.prog.Probe.Attached() {
		g.emit(asm.FnGetCurrentPidTgid.Call(), asm.RSh.Imm(asm.R0, 32))
		g.loadImm(asm.R1, int64(g.opts.Pid))
		g.emit(asm.JNE.Reg(asm.R0, asm.R1, exit))
	}
	if g.prog.Probe.Attached() {
		g.containerFilters(exit)
	}
	g.exit = exit
	g.ret = g.returnLabel()
	g.iterGuard(exit)
	if pred := g.prog.Node.Pred; pred != nil {
		g.cond(pred, exit)
	}
	g.block(g.prog.Node.Body, exit)
	g.place(exit)
	g.chainNext()
	g.emit(asm.Mov.Imm(asm.R0, 0))
	if g.ret != "" {
		g.place(g.ret)
	}
	g.emit(asm.Return())
	g.insns = append(g.insns, g.callbacks...)
	if g.err != nil {
		return nil, g.err
	}
	// The scratch lookup is a helper call on every event. A program
	// that keeps nothing in scratch, such as an empty probe or a
	// filter, does without; one that keeps little, such as a count by
	// a key, keeps it on the stack below its slots, unless one of its
	// values is larger than on_stack_limit allows there. Loop callbacks
	// look scratch up for themselves, so programs with them keep the map.
	switch base := g.maxStack + align8(g.scratch); {
	case !usesReg(g.insns[findEnd:], regScratch):
		g.insns = slices.Delete(g.insns, findStart, findEnd)
	case len(g.callbacks) == 0 && base <= stackLimit && g.largest <= g.info.Config.OnStackLimit:
		g.insns = slices.Replace(g.insns, findStart, findEnd,
			asm.Mov.Reg(regScratch, asm.RFP), asm.Add.Imm(regScratch, int32(-base)))
	}
	for i, in := range g.insns {
		if ref := in.Reference(); ref != "" {
			if to, ok := g.aliases[ref]; ok {
				g.insns[i] = in.WithReference(to)
			}
		}
	}
	return removeDead(g.insns), nil
}

// stopCheck goes on to running until the runtime raises the stop flag,
// then counts the run in slot of the stopped counters and jumps to exit.
// The runtime raises the flag instead of closing links to stop the
// probes: links are released by the kernel when the process holding
// them exits (see runtime/keeper.go). The flag is read by its address,
// which the JIT makes a constant: no helper call until it is raised.
func stopCheck(slot int32, running, exit string) asm.Instructions {
	insns := asm.Instructions{
		asm.LoadMapValue(asm.R1, 0, globalStopped).WithReference(mapGlobals),
		asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, running),
	}
	return append(append(insns, indexLookup(mapStopped, slot, exit)...),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Ja.Label(exit),
	)
}

// usesReg says whether any of insns reads or writes reg.
func usesReg(insns asm.Instructions, reg asm.Register) bool {
	for _, in := range insns {
		if in.Dst == reg || in.Src == reg {
			return true
		}
	}
	return false
}

// findScratch points regScratch at this program's entry of the per-CPU
// scratch array, or jumps to fail.
func (g *gen) findScratch(fail string) {
	g.lookupIndex(mapScratch, g.index, fail)
	g.emit(asm.Mov.Reg(regScratch, asm.R0))
}

// lookupIndex leaves in R0 a pointer to entry index of the array map
// name, or jumps to missing.
func (g *gen) lookupIndex(name string, index int, missing string) {
	g.emit(indexLookup(name, int32(index), missing)...)
}

// indexLookup is lookupIndex's code, for programs built without a gen.
// The key goes through the spare slot at -8.
func indexLookup(name string, index int32, missing string) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Imm(asm.R1, index),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(name),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, missing),
	}
}

// reserveVars gives every integer variable its own BPF stack slot for
// the whole program. They must live on the stack, not in scratch: the
// verifier tracks stack slots precisely, and needs to, to see that a
// while loop over a counter ends.
func (g *gen) reserveVars() {
	seen := map[*sema.Variable]bool{}
	var vars []*sema.Variable
	for _, v := range g.prog.Vars {
		if !seen[v] && v.Type.IsScalar() {
			seen[v] = true
			vars = append(vars, v)
		}
	}
	// Map iteration order is random; sort for a deterministic program.
	sort.Slice(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
	for _, v := range vars {
		g.vars[v] = int(g.pushSlot())
	}
}

func (g *gen) block(b *ast.Block, exit string) {
	defer func(outer string) { g.exit = outer }(g.exit)
	g.exit = exit
	for _, s := range b.Stmts {
		g.stmt(s, exit)
	}
}

func (g *gen) stmt(s ast.Stmt, exit string) {
	defer g.restoreSource(g.setSource(s))
	switch s := s.(type) {
	case *ast.Block:
		g.block(s, exit)
	case *ast.ExprStmt:
		g.exprStmt(s.X)
		if call, ok := s.X.(*ast.Call); ok && g.prog.Funcs[call] == sema.FExit {
			// exit() also ends the probe, as bpftrace's does.
			g.emit(asm.Ja.Label(exit))
		}
	case *ast.AssignStmt:
		g.assign(s)
	case *ast.LetStmt:
		v := g.prog.Vars[s.Var]
		if s.Value != nil {
			g.storeVar(v, s.Value)
		} else {
			g.zeroVar(v)
		}
	case *ast.IfStmt:
		elseL, end := g.newLabel(), g.newLabel()
		g.cond(s.Cond, elseL)
		g.block(s.Then, exit)
		if s.Else != nil {
			g.emit(asm.Ja.Label(end))
		}
		g.place(elseL)
		if s.Else != nil {
			g.stmt(s.Else, exit)
		}
		g.place(end)
	case *ast.WhileStmt:
		top, end := g.newLabel(), g.newLabel()
		g.place(top)
		g.cond(s.Cond, end)
		g.loops = append(g.loops, loop{brk: end, cont: top})
		g.block(s.Body, exit)
		g.loops = g.loops[:len(g.loops)-1]
		g.emit(asm.Ja.Label(top))
		g.place(end)
	case *ast.UnrollStmt:
		n := g.constInt(s.Count)
		for i := int64(0); i < n; i++ {
			g.block(s.Body, exit)
		}
	case *ast.ForStmt:
		g.forStmt(s, exit)
	case *ast.JumpStmt:
		switch {
		case s.Tok == token.RETURN && s.Value != nil && g.ret != "" && g.frame == asm.RFP:
			g.scalar(s.Value)
			g.emit(asm.Ja.Label(g.ret))
		case s.Tok == token.RETURN:
			if s.Value != nil {
				g.exprStmt(s.Value)
			}
			g.emit(asm.Ja.Label(exit))
		case len(g.loops) == 0:
			g.fail(s, "%s outside a loop", s.Tok)
		case s.Tok == token.BREAK:
			g.emit(asm.Ja.Label(g.loops[len(g.loops)-1].brk))
		default:
			g.emit(asm.Ja.Label(g.loops[len(g.loops)-1].cont))
		}
	default:
		g.fail(s, "unsupported statement %T", s)
	}
}

// cond jumps to target when e is false (zero).
func (g *gen) cond(e ast.Expr, target string) {
	g.scalar(e)
	g.emit(asm.JEq.Imm(asm.R0, 0, target))
}

// constInt evaluates an expression the checker proved constant.
func (g *gen) constInt(e ast.Expr) int64 {
	if x := g.prog.Stands[e]; x != nil {
		return g.constInt(x) // a positional parameter's literal
	}
	switch e := e.(type) {
	case *ast.IntLit:
		return int64(e.Value)
	case *ast.Unary:
		return -g.constInt(e.X)
	case *ast.BlockExpr:
		return g.constInt(e.Value)
	case *ast.Cast:
		return g.constInt(e.X) // an integer option's literal
	case *ast.Positional:
		if e.Count {
			return int64(len(g.info.Config.Params))
		}
		v, _ := g.info.Config.ParamInt(e.N)
		return v
	}
	g.fail(e, "expected a constant")
	return 0
}

// typ is the checked type of e.
func (g *gen) typ(e ast.Expr) *sema.Type { return g.prog.Types[e] }

// loadImm puts a 64-bit constant in reg.
func (g *gen) loadImm(reg asm.Register, v int64) {
	if v >= -1<<31 && v < 1<<31 {
		g.emit(asm.Mov.Imm(reg, int32(v)))
		return
	}
	g.emit(asm.LoadImm(reg, v, asm.DWord))
}

// scratchPtr sets reg to the address of scratch offset off.
func (g *gen) scratchPtr(reg asm.Register, off int) {
	g.emit(asm.Mov.Reg(reg, regScratch), asm.Add.Imm(reg, int32(off)))
}

// copyMem copies n bytes from src+soff to dst+doff, both pointers to
// memory the verifier knows the size of. It stops at an error, such as
// an object too large for scratch, which it would copy for long.
func (g *gen) copyMem(dst asm.Register, doff int, src asm.Register, soff int, n int) {
	for n > 0 && g.err == nil {
		size, w := chunk(n, doff, soff)
		g.emit(asm.LoadMem(asm.R1, src, int16(soff), size), asm.StoreMem(dst, int16(doff), asm.R1, size))
		doff, soff, n = doff+w, soff+w, n-w
	}
}

// zeroMem clears n bytes at dst+off; it stops at an error, as copyMem.
func (g *gen) zeroMem(dst asm.Register, off, n int) {
	g.emit(asm.Mov.Imm(asm.R1, 0))
	for n > 0 && g.err == nil {
		size, w := chunk(n, off)
		g.emit(asm.StoreMem(dst, int16(off), asm.R1, size))
		off, n = off+w, n-w
	}
}

// chunk is the widest access that fits in n bytes and is aligned at
// every offset of offs: the verifier refuses misaligned stack accesses,
// and a tuple's string may start anywhere.
func chunk(n int, offs ...int) (asm.Size, int) {
	sizes := []asm.Size{asm.DWord, asm.Word, asm.Half}
	for i, w := range []int{8, 4, 2} {
		if n >= w && aligned(w, offs) {
			return sizes[i], w
		}
	}
	return asm.Byte, 1
}

func aligned(w int, offs []int) bool {
	for _, off := range offs {
		if off%w != 0 {
			return false
		}
	}
	return true
}

// storeBytes writes the constant bytes b, zero padded to n, at scratch off.
func (g *gen) storeBytes(off int, b []byte, n int) {
	for i := 0; i < n; {
		// A store of an immediate takes at most 4 bytes.
		size, w := chunk(min(n-i, 4), off+i)
		var v uint32
		for j := w - 1; j >= 0; j-- {
			v <<= 8
			if i+j < len(b) {
				v |= uint32(b[i+j])
			}
		}
		g.emit(asm.StoreImm(regScratch, int16(off+i), int64(int32(v)), size))
		i += w
	}
}

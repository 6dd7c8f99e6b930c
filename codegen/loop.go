package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"

	"gtrace/lang/ast"
	"gtrace/lang/token"
	"gtrace/sema"
)

// Loop bodies are callbacks of bpf_for_each_map_elem and bpf_loop: static
// BPF functions placed after the probe's code. A callback reaches the
// probe's integer variables and context through a pointer to the probe's
// frame, passed as the helper's context argument and kept in regFrame.

// hasLoops reports whether a probe has a for loop or calls len(),
// strcontains() or dw_ustack, whose code needs a callback.
func hasLoops(p *ast.Probe) bool {
	found := false
	ast.Inspect(p, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ForStmt:
			found = true
		case *ast.Call:
			found = found || n.Name == "len" || n.Name == "strcontains" || n.Name == "dw_ustack"
		case *ast.Ident:
			found = found || n.Name == "dw_ustack"
		}
		return !found
	})
	return found
}

// Callback frame slots: the helper's arguments saved on entry, and the
// state of the per-CPU merge.
const (
	cbArg0   = -16
	cbArg1   = -24
	cbCPU    = -32
	cbAcc    = -40
	cbHave   = -48
	cbFrame0 = 48 // bytes of callback frame the slots above use
)

// callback generates a static function named sym after the probe's code.
// params names its BPF arguments; ctxArg is the register holding the
// helper's context pointer, the probe's frame; returns says whether the
// body holds a return. body generates the loop body given the labels for
// continue, break and return.
func (g *gen) callback(sym string, params []string, ctxArg asm.Register, returns bool, prologue func(), body func(cont, brk, ret string)) {
	insns, pending, stack, loops, frame, srcPending := g.insns, g.pending, g.stack, g.loops, g.frame, g.srcPending
	g.insns, g.pending, g.stack, g.loops, g.frame, g.srcPending = nil, "", cbFrame0, nil, regFrame, false

	cont, brk, ret := g.newLabel(), g.newLabel(), g.newLabel()
	first := asm.Mov.Reg(regFrame, ctxArg).WithSymbol(sym)
	g.insns = append(g.insns, g.funcEntry(first, callbackInfo(g.prog.Probe.Name, sym, params)))
	prologue()
	g.findScratch(brk)
	g.emit(asm.LoadMem(regCtx, regFrame, slotCtx, asm.DWord))
	body(cont, brk, ret)
	g.place(cont)
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	g.place(brk)
	g.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	if returns {
		// The verifier refuses unreachable code: only when used.
		g.place(ret)
		g.emit(asm.Mov.Imm(asm.R1, 1), asm.StoreMem(regFrame, slotReturn, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R0, 1), asm.Return())
	}

	g.callbacks = append(g.callbacks, g.insns...)
	g.insns, g.pending, g.stack, g.loops, g.frame, g.srcPending = insns, pending, stack, loops, frame, srcPending
}

// callbackInfo is the BTF function of a loop callback.
func callbackInfo(probe, sym string, params []string) *btf.Func {
	u64 := &btf.Int{Name: "unsigned long", Size: 8}
	ptr := &btf.Pointer{Target: &btf.Void{}}
	proto := &btf.FuncProto{Return: &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}}
	for i, p := range params {
		var t btf.Type = ptr
		if p == "index" && i == 0 {
			t = u64
		}
		proto.Params = append(proto.Params, btf.FuncParam{Name: p, Type: t})
	}
	return &btf.Func{Name: funcName(probe) + "_" + sym, Type: proto, Linkage: btf.StaticFunc}
}

// funcRef loads the address of the BPF function sym into reg.
func funcRef(reg asm.Register, sym string) asm.Instruction {
	return asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: reg, Src: asm.PseudoFunc, Constant: -1}.WithReference(sym)
}

// forStmt generates a for loop over a map or a range.
func (g *gen) forStmt(s *ast.ForStmt, exit string) {
	sym := fmt.Sprintf("loop%d", g.labels)
	g.labels++
	v := g.prog.Vars[s.Var]
	returns := hasReturn(s.Body)
	loopBody := func(cont, brk, ret string) {
		g.loops = append(g.loops, loop{brk: brk, cont: cont})
		g.block(s.Body, ret)
	}
	if s.Map != nil {
		l := g.out.Maps[s.Map.Name]
		g.callback(sym, []string{"map", "key", "value", "ctx"}, asm.R4, returns, func() {
			g.emit(asm.StoreMem(asm.RFP, cbArg0, asm.R2, asm.DWord), asm.StoreMem(asm.RFP, cbArg1, asm.R3, asm.DWord))
		}, func(cont, brk, ret string) {
			g.loadEntry(v, l)
			loopBody(cont, brk, ret)
		})
		g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName))
		g.callHelper(asm.FnForEachMapElem, sym)
	} else {
		start := g.alloc(8)
		g.scalar(s.Start)
		g.emit(asm.StoreMem(regScratch, int16(start), asm.R0, asm.DWord))
		g.callback(sym, []string{"index", "ctx"}, asm.R2, returns, func() {
			g.emit(asm.StoreMem(asm.RFP, cbArg0, asm.R1, asm.DWord))
		}, func(cont, brk, ret string) {
			g.emit(
				asm.LoadMem(asm.R0, asm.RFP, cbArg0, asm.DWord),
				asm.LoadMem(asm.R1, regScratch, int16(start), asm.DWord),
				asm.Add.Reg(asm.R0, asm.R1),
				asm.StoreMem(regFrame, int16(g.varOffset(v)), asm.R0, asm.DWord),
			)
			loopBody(cont, brk, ret)
		})
		// Iterations: end - start, none when the range is empty.
		g.scalar(s.End)
		none := g.newLabel()
		g.emit(
			asm.LoadMem(asm.R1, regScratch, int16(start), asm.DWord),
			asm.Sub.Reg(asm.R0, asm.R1),
			asm.JSGT.Imm(asm.R0, 0, none),
			asm.Mov.Imm(asm.R0, 0),
		)
		g.place(none)
		g.emit(asm.Mov.Reg(asm.R1, asm.R0))
		g.callHelper(asm.FnLoop, sym)
	}
	if returns {
		g.emit(asm.LoadMem(asm.R1, g.frame, slotReturn, asm.DWord), asm.JNE.Imm(asm.R1, 0, exit))
	}
}

// callHelper calls bpf_loop or bpf_for_each_map_elem, whose first
// argument is already in R1, with the callback sym and this frame as its
// context. The return flag is cleared first.
func (g *gen) callHelper(fn asm.BuiltinFunc, sym string) {
	g.emit(
		asm.Mov.Imm(asm.R2, 0),
		asm.StoreMem(g.frame, slotReturn, asm.R2, asm.DWord),
		funcRef(asm.R2, sym),
		asm.Mov.Reg(asm.R3, g.frame),
		asm.Mov.Imm(asm.R4, 0),
		fn.Call(),
	)
}

// hasReturn reports whether a loop body holds a return statement, or an
// exit() or assert(), which return too.
func hasReturn(b *ast.Block) bool {
	found := false
	ast.Inspect(b, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.JumpStmt:
			found = n.Tok == token.RETURN
		case *ast.Call:
			found = n.Name == "exit" || n.Name == "assert"
		}
		return !found
	})
	return found
}

// loadEntry fills a map loop's variable, the tuple (key, value), from the
// key and value pointers the callback saved. An aggregation's value is
// merged over every CPU, as user space merges it for printing.
func (g *gen) loadEntry(v *sema.Variable, l *MapLayout) {
	t := v.Type
	off := g.varOffset(v)
	offs := t.Offsets()
	g.zeroMem(regScratch, off, t.Size)
	g.emit(asm.LoadMem(regMapVal, asm.RFP, cbArg0, asm.DWord))
	g.copyMem(regScratch, off+offs[0], regMapVal, 0, t.Elems[0].Size)
	if !l.PerCPU {
		g.emit(asm.LoadMem(regMapVal, asm.RFP, cbArg1, asm.DWord))
		g.copyMem(regScratch, off+offs[1], regMapVal, 0, min(t.Elems[1].Size, l.ValueSize))
		return
	}
	g.mergeCPUs(l)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, cbAcc, asm.DWord), asm.StoreMem(regScratch, int16(off+offs[1]), asm.R0, asm.DWord))
}

// mergeCPUs leaves in cbAcc the total of count and sum, or the least or
// greatest of min and max, over every possible CPU's value of the key
// saved at cbArg0.
func (g *gen) mergeCPUs(l *MapLayout) {
	agg := l.Value.Agg
	top, next, done := g.newLabel(), g.newLabel(), g.newLabel()
	g.emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, cbCPU, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, cbAcc, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, cbHave, asm.R1, asm.DWord),
	)
	g.place(top)
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, cbCPU, asm.DWord),
		asm.JGE.Imm(asm.R3, int32(g.opts.NumCPU), done),
		asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName),
		asm.LoadMem(asm.R2, asm.RFP, cbArg0, asm.DWord),
		asm.FnMapLookupPercpuElem.Call(),
		asm.JEq.Imm(asm.R0, 0, next),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.LoadMem(asm.R2, asm.RFP, cbAcc, asm.DWord),
	)
	switch agg {
	case sema.AggCount, sema.AggSum:
		g.emit(asm.Add.Reg(asm.R2, asm.R1), asm.StoreMem(asm.RFP, cbAcc, asm.R2, asm.DWord))
	default: // min, max: {value, set}
		take := g.newLabel()
		jop := asm.JSLT
		if agg == sema.AggMax {
			jop = asm.JSGT
		}
		g.emit(
			asm.LoadMem(asm.R3, asm.R0, 8, asm.DWord),
			asm.JEq.Imm(asm.R3, 0, next),
			asm.LoadMem(asm.R3, asm.RFP, cbHave, asm.DWord),
			asm.JEq.Imm(asm.R3, 0, take),
			jop.Reg(asm.R1, asm.R2, take),
			asm.Ja.Label(next),
		)
		g.place(take)
		g.emit(asm.StoreMem(asm.RFP, cbAcc, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R3, 1), asm.StoreMem(asm.RFP, cbHave, asm.R3, asm.DWord))
	}
	g.place(next)
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, cbCPU, asm.DWord),
		asm.Add.Imm(asm.R3, 1),
		asm.StoreMem(asm.RFP, cbCPU, asm.R3, asm.DWord),
		asm.Ja.Label(top),
	)
	g.place(done)
}

// mapLen counts the entries of a map into R0 with bpf_for_each_map_elem
// and a callback that only goes on.
func (g *gen) mapLen(l *MapLayout) {
	sym := fmt.Sprintf("len%d", g.labels)
	g.labels++
	first := asm.Mov.Imm(asm.R0, 0).WithSymbol(sym)
	g.callbacks = append(g.callbacks,
		g.funcEntry(first, callbackInfo(g.prog.Probe.Name, sym, []string{"map", "key", "value", "ctx"})),
		asm.Return())
	g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName))
	g.callHelper(asm.FnForEachMapElem, sym)
}

package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/lang/token"
	"gtrace/sema"
)

// buildKey writes m's key into a fresh scratch buffer of the map's key
// size and returns its offset. A map without keys uses the key 0.
func (g *gen) buildKey(name string, keys []ast.Expr) (int, *MapLayout) {
	l := g.out.Maps[name]
	off := g.alloc(l.KeySize)
	g.zeroMem(regScratch, off, l.KeySize)
	switch {
	case len(keys) == 1:
		g.into(keys[0], l.Key, off)
	case len(keys) > 1:
		offs := l.Key.Offsets()
		for i, k := range keys {
			g.into(k, l.Key.Elems[i], off+offs[i])
		}
	}
	return off, l
}

// lookup leaves a pointer to the value of key (a scratch offset) in R0,
// or 0 when the map has no such key.
func (g *gen) lookup(l *MapLayout, key int) {
	g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName))
	g.scratchPtr(asm.R2, key)
	g.emit(asm.FnMapLookupElem.Call())
}

// update stores the value at scratch offset val under key. A refusal,
// such as a full map, is counted in the map's mapfull slot.
func (g *gen) update(l *MapLayout, key, val int) {
	g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName))
	g.scratchPtr(asm.R2, key)
	g.scratchPtr(asm.R3, val)
	g.emit(asm.Mov.Imm(asm.R4, 0), asm.FnMapUpdateElem.Call())
	ok := g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, ok))
	g.countFailure(mapFull, l.Index)
	g.place(ok)
}

// countFailure adds one to slot index of the per-CPU counter array name.
func (g *gen) countFailure(name string, index int) {
	done := g.newLabel()
	g.lookupIndex(name, index, done)
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	)
	g.place(done)
}

// mapRead reads @m[k]: a scalar into R0 (dst < 0) or a composite value
// into scratch at dst. A missing key reads as zero.
func (g *gen) mapRead(m *ast.Map, dst int) {
	key, l := g.buildKey(m.Name, m.Keys)
	g.lookup(l, key)
	missing, end := g.newLabel(), g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, missing))
	if dst < 0 {
		g.emit(asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord), asm.Ja.Label(end))
		g.place(missing)
		g.lookupError(m)
		g.emit(asm.Mov.Imm(asm.R0, 0))
		g.place(end)
		return
	}
	size := g.typ(m).Size
	g.emit(asm.Mov.Reg(regMapVal, asm.R0))
	g.copyMem(regScratch, dst, regMapVal, 0, size)
	g.emit(asm.Ja.Label(end))
	g.place(missing)
	g.lookupError(m)
	g.zeroMem(regScratch, dst, size)
	g.place(end)
}

func (g *gen) assign(s *ast.AssignStmt) {
	switch lhs := s.LHS.(type) {
	case *ast.Var:
		v := g.prog.Vars[lhs]
		if op, ok := s.Op.AssignOp(); ok {
			off := int16(g.varOffset(v))
			g.scalar(s.RHS)
			g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.LoadMem(asm.R0, g.frame, off, asm.DWord))
			g.scalePointer(op, v.Type, g.typ(s.RHS))
			g.applyOp(op, sema.Signed(v.Type, g.typ(s.RHS)), s)
			g.truncate(v.Type)
			g.emit(asm.StoreMem(g.frame, off, asm.R0, asm.DWord))
			return
		}
		g.storeVar(v, s.RHS)
	case *ast.Map:
		l := g.out.Maps[lhs.Name]
		if call, ok := s.RHS.(*ast.Call); ok && g.prog.Funcs[call].Agg() != sema.NoAgg {
			g.aggregate(lhs, l, call)
			return
		}
		if blk, ok := s.RHS.(*ast.BlockExpr); ok {
			if call := sema.AggregationValue(blk); call != nil {
				for _, st := range blk.Stmts {
					g.stmt(st, g.exit)
				}
				g.aggregate(lhs, l, call)
				return
			}
		}
		if op, ok := s.Op.AssignOp(); ok {
			g.mapModify(lhs, l, func() {
				slot := g.pushSlot()
				g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
				g.scalar(s.RHS)
				g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord))
				g.popSlot()
				g.scalePointer(op, l.Value, g.typ(s.RHS))
				g.applyOp(op, sema.Signed(l.Value, g.typ(s.RHS)), s)
			})
			return
		}
		val := g.alloc(l.ValueSize)
		if l.Value.IsScalar() {
			g.scalar(s.RHS)
			g.emit(asm.StoreMem(regScratch, int16(val), asm.R0, asm.DWord))
		} else {
			g.into(s.RHS, l.Value, val)
		}
		key, _ := g.buildKey(lhs.Name, lhs.Keys)
		g.update(l, key, val)
	}
}

// divideByZero is bpftrace's warning when a division or modulo by zero
// runs.
const divideByZero = "Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result."

// applyOp computes R0 = R0 op R1 for an arithmetic operator. A division
// or modulo by zero gives 1, as in bpftrace, and warns at the node at
// when there is one.
func (g *gen) applyOp(op token.Kind, signed bool, at ast.Node) {
	alu := aluOps[op]
	if alu == asm.RSh && signed {
		alu = asm.ArSh
	}
	switch alu {
	case asm.Div, asm.Mod:
		ok, done := g.newLabel(), g.newLabel()
		g.emit(asm.JNE.Imm(asm.R1, 0, ok))
		if at != nil {
			g.event(&Event{Kind: EvWarning, Format: divideByZero, At: at.Span()}, nil)
		}
		g.emit(asm.Mov.Imm(asm.R0, 1), asm.Ja.Label(done))
		g.place(ok)
		g.emit(alu.Reg(asm.R0, asm.R1))
		g.place(done)
		return
	case asm.LSh, asm.RSh, asm.ArSh:
		// BPF takes the count modulo 64, so that 1 << 64 would be 1.
		// Shifting out every bit leaves 0, or the sign for >> of a
		// negative value; a negative count is a huge one.
		ok := g.newLabel()
		g.emit(asm.JLT.Imm(asm.R1, 64, ok))
		if alu == asm.ArSh {
			g.emit(asm.Mov.Imm(asm.R1, 63))
		} else {
			g.emit(asm.Mov.Imm(asm.R0, 0), asm.Mov.Imm(asm.R1, 0))
		}
		g.place(ok)
	}
	g.emit(alu.Reg(asm.R0, asm.R1))
}

// mapModify replaces the integer at @m[k] with f(old), where f computes
// R0 from R0; a missing key counts as 0. R0 holds the new value
// afterwards.
func (g *gen) mapModify(m *ast.Map, l *MapLayout, f func()) {
	key, _ := g.buildKey(m.Name, m.Keys)
	ptr := g.alloc(8)
	g.lookup(l, key)
	g.emit(asm.StoreMem(regScratch, int16(ptr), asm.R0, asm.DWord))
	missing, end := g.newLabel(), g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, missing), asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord))
	g.emit(asm.Ja.Label(end))
	g.place(missing)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.place(end)
	f()
	// Store through the pointer if there was one, else insert.
	val := g.alloc(8)
	insert, done := g.newLabel(), g.newLabel()
	g.emit(
		asm.StoreMem(regScratch, int16(val), asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, regScratch, int16(ptr), asm.DWord),
		asm.JEq.Imm(asm.R1, 0, insert),
	)
	// The pointer was spilled to scratch, which the verifier does not
	// track; look the key up again for a pointer it trusts.
	g.lookup(l, key)
	g.emit(asm.JEq.Imm(asm.R0, 0, insert),
		asm.LoadMem(asm.R1, regScratch, int16(val), asm.DWord),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Ja.Label(done))
	g.place(insert)
	g.update(l, key, val)
	g.place(done)
	g.emit(asm.LoadMem(asm.R0, regScratch, int16(val), asm.DWord))
}

func (g *gen) incDec(e *ast.IncDec) {
	delta := int32(1)
	if e.Op == token.DEC {
		delta = -1
	}
	t := g.typ(e)
	if t.Kind == sema.Pointer {
		delta *= int32(sema.PointeeSize(t)) // p++ moves to the next element
	}
	switch x := e.X.(type) {
	case *ast.Var:
		off := int16(g.varOffset(g.prog.Vars[x]))
		g.emit(asm.LoadMem(asm.R0, g.frame, off, asm.DWord), asm.Add.Imm(asm.R0, delta))
		g.truncate(t)
		g.emit(asm.StoreMem(g.frame, off, asm.R0, asm.DWord))
	case *ast.Map:
		g.mapModify(x, g.out.Maps[x.Name], func() { g.emit(asm.Add.Imm(asm.R0, delta)) })
	}
	if e.Post {
		g.emit(asm.Add.Imm(asm.R0, -delta))
	}
}

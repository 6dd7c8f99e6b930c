package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/lang/token"
	"gtrace/sema"
)

// aggregate generates `@m[k] = f(x)` for an aggregating function. The
// maps are per-CPU, so values are updated in place without atomics and
// merged in user space.
func (g *gen) aggregate(m *ast.Map, l *MapLayout, call *ast.Call) {
	agg := l.Value.Agg
	if agg == sema.AggTSeries {
		g.tseries(m, l, call)
		return
	}
	// The argument, kept in scratch while the key is built.
	arg := g.alloc(8)
	if len(call.Args) > 0 {
		g.scalar(call.Args[0])
		g.emit(asm.StoreMem(regScratch, int16(arg), asm.R0, asm.DWord))
	}
	key, _ := g.buildKey(m.Name, m.Keys)
	if agg == sema.AggHist || agg == sema.AggLHist {
		g.emit(asm.LoadMem(asm.R0, regScratch, int16(arg), asm.DWord))
		if agg == sema.AggHist {
			g.histBucket(l.Value.HistBits)
		} else {
			g.lhistBucket(l.Value)
		}
		if l.Buckets > 0 {
			g.emit(asm.StoreMem(regScratch, int16(key), asm.R0, asm.Word))
		} else {
			g.emit(asm.StoreMem(regScratch, int16(key+l.KeySize-8), asm.R0, asm.DWord))
		}
		agg = sema.AggCount
	}
	g.lookup(l, key)
	done := g.newLabel()
	if l.Buckets > 0 || l.Single {
		// An array's entry always exists: the check is for the verifier.
		g.emit(asm.JEq.Imm(asm.R0, 0, done))
		g.accumulate(l, agg, arg)
		g.place(done)
		return
	}
	insert := g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, insert))
	g.accumulate(l, agg, arg)
	g.emit(asm.Ja.Label(done))
	// First value on this CPU: insert the initial value.
	g.place(insert)
	val := g.alloc(l.ValueSize)
	g.emit(asm.LoadMem(asm.R2, regScratch, int16(arg), asm.DWord))
	switch agg {
	case sema.AggCount:
		g.emit(asm.Mov.Imm(asm.R1, 1), asm.StoreMem(regScratch, int16(val), asm.R1, asm.DWord))
	case sema.AggSum:
		g.emit(asm.StoreMem(regScratch, int16(val), asm.R2, asm.DWord))
	case sema.AggMin, sema.AggMax:
		g.emit(asm.StoreMem(regScratch, int16(val), asm.R2, asm.DWord),
			asm.Mov.Imm(asm.R1, 1), asm.StoreMem(regScratch, int16(val+8), asm.R1, asm.DWord))
	case sema.AggAvg, sema.AggStats:
		g.emit(asm.Mov.Imm(asm.R1, 1), asm.StoreMem(regScratch, int16(val), asm.R1, asm.DWord),
			asm.StoreMem(regScratch, int16(val+8), asm.R2, asm.DWord))
	}
	g.update(l, key, val)
	g.place(done)
}

// accumulate adds the argument at scratch offset arg to the value R0
// points at, this CPU's, for the aggregation agg (count for buckets).
func (g *gen) accumulate(l *MapLayout, agg sema.AggKind, arg int) {
	if agg != sema.AggCount {
		g.emit(asm.LoadMem(asm.R2, regScratch, int16(arg), asm.DWord))
	}
	// R0 points at the value, R2 holds the argument.
	switch agg {
	case sema.AggCount:
		g.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), asm.Add.Imm(asm.R1, 1), asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord))
	case sema.AggSum:
		g.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), asm.Add.Reg(asm.R1, asm.R2), asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord))
		if l.Single {
			// The mark, for a total of zero; only its being
			// non-zero counts, so its low half will do.
			g.emit(asm.StoreImm(asm.R0, int16(l.ValueSize-8), 1, asm.Word))
		}
	case sema.AggMin, sema.AggMax:
		// {value, set}: replace when unset or beaten.
		store, keep := g.newLabel(), g.newLabel()
		jop := asm.JSLT
		if agg == sema.AggMax {
			jop = asm.JSGT
		}
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, store),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			jop.Reg(asm.R2, asm.R1, store),
			asm.Ja.Label(keep),
		)
		g.place(store)
		g.emit(asm.StoreMem(asm.R0, 0, asm.R2, asm.DWord), asm.Mov.Imm(asm.R1, 1), asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord))
		g.place(keep)
	case sema.AggAvg, sema.AggStats:
		// {count, total}
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord), asm.Add.Imm(asm.R1, 1), asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord), asm.Add.Reg(asm.R1, asm.R2), asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
		)
	}
}

// histBucket turns the value in R0 into its hist(v, k) bucket, the
// layout output.HistBucket documents: 0 for negative values, v+1 for
// v < 2^k, then 2^k buckets for every power of two.
func (g *gen) histBucket(k int64) {
	neg, small, done := g.newLabel(), g.newLabel(), g.newLabel()
	mask := int32(1)<<k - 1
	g.emit(
		asm.JSLT.Imm(asm.R0, 0, neg),
		asm.JLE.Imm(asm.R0, mask, small),
		// R3 keeps v; R1 becomes floor(log2(v)) by binary search.
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Mov.Imm(asm.R1, 0),
	)
	for _, sh := range []int32{32, 16, 8, 4, 2, 1} {
		skip := g.newLabel()
		g.emit(asm.Mov.Reg(asm.R2, asm.R0), asm.RSh.Imm(asm.R2, sh), asm.JEq.Imm(asm.R2, 0, skip),
			asm.Mov.Reg(asm.R0, asm.R2), asm.Add.Imm(asm.R1, sh))
		g.place(skip)
	}
	// l = log2(v) - k; bucket = ((l+1) << k) + ((v >> l) & mask) + 1.
	g.emit(
		asm.Sub.Imm(asm.R1, int32(k)),
		asm.RSh.Reg(asm.R3, asm.R1),
		asm.And.Imm(asm.R3, mask),
		asm.Add.Imm(asm.R1, 1),
		asm.LSh.Imm(asm.R1, int32(k)),
		asm.Add.Reg(asm.R1, asm.R3),
		asm.Add.Imm(asm.R1, 1),
		asm.Mov.Reg(asm.R0, asm.R1),
		asm.Ja.Label(done),
	)
	g.place(small)
	g.emit(asm.Add.Imm(asm.R0, 1), asm.Ja.Label(done))
	g.place(neg)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.place(done)
}

// lhistBucket turns the value in R0 into its lhist bucket: 0 below min,
// then one per step, and the last at or above max.
func (g *gen) lhistBucket(t *sema.Type) {
	below, above, done := g.newLabel(), g.newLabel(), g.newLabel()
	g.loadImm(asm.R1, t.LMin)
	g.emit(asm.JSLT.Reg(asm.R0, asm.R1, below))
	g.loadImm(asm.R1, t.LMax)
	g.emit(asm.JSGE.Reg(asm.R0, asm.R1, above))
	g.loadImm(asm.R1, t.LMin)
	g.emit(asm.Sub.Reg(asm.R0, asm.R1))
	g.loadImm(asm.R1, t.LStep)
	g.emit(asm.Div.Reg(asm.R0, asm.R1), asm.Add.Imm(asm.R0, 1), asm.Ja.Label(done))
	g.place(below)
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(done))
	g.place(above)
	g.loadImm(asm.R0, (t.LMax-t.LMin)/t.LStep+1)
	g.place(done)
}

// aggValue sets R0 to the value of the count, sum, min, max or avg at
// @m[k], merged over every CPU's value as user space merges them to
// print it: a read of each CPU's value with bpf_map_lookup_percpu_elem.
func (g *gen) aggValue(m *ast.Map) {
	key, l := g.buildKey(m.Name, m.Keys)
	agg := l.Value.Agg
	// acc holds the count, sum, min or max so far, then avg's total or
	// the flag that min or max has a value.
	acc := g.alloc(16)
	g.zeroMem(regScratch, acc, 16)
	cpu := g.pushSlot()
	defer g.popSlot()
	top, end := g.newLabel(), g.newLabel()
	g.emit(asm.Mov.Imm(asm.R1, 0), asm.StoreMem(asm.RFP, cpu, asm.R1, asm.DWord))
	g.place(top)
	g.emit(
		asm.LoadMem(asm.R3, asm.RFP, cpu, asm.DWord),
		asm.JGE.Imm(asm.R3, int32(g.opts.NumCPU), end),
		asm.Mov.Reg(asm.R1, asm.R3), asm.Add.Imm(asm.R1, 1), asm.StoreMem(asm.RFP, cpu, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName),
	)
	g.scratchPtr(asm.R2, key)
	g.emit(asm.FnMapLookupPercpuElem.Call(), asm.JEq.Imm(asm.R0, 0, top))
	switch agg {
	case sema.AggCount, sema.AggSum:
		g.addInto(acc, 0)
	case sema.AggAvg:
		g.addInto(acc, 0)
		g.addInto(acc+8, 8)
	case sema.AggMin, sema.AggMax:
		jop := asm.JSGE // keep the minimum when the new value is not below it
		if agg == sema.AggMax {
			jop = asm.JSLE
		}
		take := g.newLabel()
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord), asm.JEq.Imm(asm.R1, 0, top),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.LoadMem(asm.R2, regScratch, int16(acc+8), asm.DWord), asm.JEq.Imm(asm.R2, 0, take),
			asm.LoadMem(asm.R2, regScratch, int16(acc), asm.DWord), jop.Reg(asm.R1, asm.R2, top),
		)
		g.place(take)
		g.emit(asm.StoreMem(regScratch, int16(acc), asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R1, 1), asm.StoreMem(regScratch, int16(acc+8), asm.R1, asm.DWord))
	}
	g.emit(asm.Ja.Label(top))
	g.place(end)
	g.emit(asm.LoadMem(asm.R0, regScratch, int16(acc), asm.DWord))
	if agg == sema.AggAvg {
		// The total over the count; 0 while there is no value.
		none := g.newLabel()
		g.emit(asm.JEq.Imm(asm.R0, 0, none),
			asm.Mov.Reg(asm.R1, asm.R0), asm.LoadMem(asm.R0, regScratch, int16(acc+8), asm.DWord))
		g.applyOp(token.DIV, true, nil)
		g.place(none)
	}
}

// addInto adds the word at off in the value R0 points at to the word at
// scratch offset acc.
func (g *gen) addInto(acc int, off int16) {
	g.emit(asm.LoadMem(asm.R1, asm.R0, off, asm.DWord),
		asm.LoadMem(asm.R2, regScratch, int16(acc), asm.DWord),
		asm.Add.Reg(asm.R2, asm.R1), asm.StoreMem(regScratch, int16(acc), asm.R2, asm.DWord))
}

package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// A tseries map's key is the script's key, then the slot of the
// interval: its epoch (the number of intervals since time 0) modulo the
// intervals kept. Its value, per CPU, is the value, what the aggregation
// keeps beside it (avg's count, min's and max's set flag, or the time of
// the last write), and the epoch the slot holds, as bpftrace lays it out.
const (
	tseriesValueSize = 24
	tsValue          = 0
	tsMeta           = 8
	tsEpoch          = 16
)

// tseries generates `@m[k] = tseries(n, interval, intervals[, agg])`:
// the slot of the current interval takes n, starting over when it last
// held an older interval.
func (g *gen) tseries(m *ast.Map, l *MapLayout, call *ast.Call) {
	ts := l.Value.TSeries
	n, now, epoch := g.alloc(8), g.alloc(8), g.alloc(8)
	g.scalar(call.Args[0])
	g.emit(asm.StoreMem(regScratch, int16(n), asm.R0, asm.DWord))
	g.tseriesNow()
	g.emit(asm.StoreMem(regScratch, int16(now), asm.R0, asm.DWord))
	g.loadImm(asm.R1, int64(ts.Interval))
	g.emit(asm.Div.Reg(asm.R0, asm.R1), asm.StoreMem(regScratch, int16(epoch), asm.R0, asm.DWord))
	key, _ := g.buildKey(m.Name, m.Keys)
	g.loadImm(asm.R1, int64(ts.Intervals))
	g.emit(
		asm.LoadMem(asm.R0, regScratch, int16(epoch), asm.DWord),
		asm.Mod.Reg(asm.R0, asm.R1),
		asm.StoreMem(regScratch, int16(key+l.KeySize-8), asm.R0, asm.DWord),
	)
	g.lookup(l, key)
	insert, done := g.newLabel(), g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, insert))
	g.tseriesStore(ts, n, now, epoch)
	g.emit(asm.Ja.Label(done))
	// First value of the slot on this CPU: fill a fresh one and insert it.
	g.place(insert)
	val := g.alloc(tseriesValueSize)
	g.zeroMem(regScratch, val, tseriesValueSize)
	g.scratchPtr(asm.R0, val)
	g.tseriesStore(ts, n, now, epoch)
	g.update(l, key, val)
	g.place(done)
}

// tseriesNow sets R0 to the time in nanoseconds: the TAI clock, as
// nsecs(sw_tai) reads it, which older kernels' BPF cannot read directly,
// or the value of the map the tests name instead.
func (g *gen) tseriesNow() {
	if name := g.info.DummyTSMap; name != "" {
		g.mapRead(&ast.Map{Name: name}, -1)
		return
	}
	g.swTai()
}

// tseriesStore updates the slot value R0 points at with the value at
// scratch offset n, taken at time now in interval epoch.
func (g *gen) tseriesStore(ts *sema.TSeries, n, now, epoch int) {
	g.emit(
		asm.LoadMem(asm.R2, regScratch, int16(n), asm.DWord),
		asm.LoadMem(asm.R3, regScratch, int16(epoch), asm.DWord),
	)
	if ts.Agg != "" {
		// A slot of an older interval starts over.
		same := g.newLabel()
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, tsEpoch, asm.DWord),
			asm.JEq.Reg(asm.R1, asm.R3, same),
			asm.Mov.Imm(asm.R1, 0),
			asm.StoreMem(asm.R0, tsValue, asm.R1, asm.DWord),
			asm.StoreMem(asm.R0, tsMeta, asm.R1, asm.DWord),
		)
		g.place(same)
	}
	switch ts.Agg {
	case "":
		g.emit(
			asm.StoreMem(asm.R0, tsValue, asm.R2, asm.DWord),
			asm.LoadMem(asm.R1, regScratch, int16(now), asm.DWord),
			asm.StoreMem(asm.R0, tsMeta, asm.R1, asm.DWord),
		)
	case "avg", "sum":
		if ts.Agg == "avg" {
			g.emit(asm.LoadMem(asm.R1, asm.R0, tsMeta, asm.DWord), asm.Add.Imm(asm.R1, 1),
				asm.StoreMem(asm.R0, tsMeta, asm.R1, asm.DWord))
		}
		g.emit(asm.LoadMem(asm.R1, asm.R0, tsValue, asm.DWord), asm.Add.Reg(asm.R1, asm.R2),
			asm.StoreMem(asm.R0, tsValue, asm.R1, asm.DWord))
	case "min", "max":
		// Replace when unset or beaten.
		store, keep := g.newLabel(), g.newLabel()
		jop := pick(ts.Signed, asm.JSLT, asm.JLT)
		if ts.Agg == "max" {
			jop = pick(ts.Signed, asm.JSGT, asm.JGT)
		}
		g.emit(
			asm.LoadMem(asm.R1, asm.R0, tsMeta, asm.DWord),
			asm.JEq.Imm(asm.R1, 0, store),
			asm.LoadMem(asm.R1, asm.R0, tsValue, asm.DWord),
			jop.Reg(asm.R2, asm.R1, store),
			asm.Ja.Label(keep),
		)
		g.place(store)
		g.emit(asm.StoreMem(asm.R0, tsValue, asm.R2, asm.DWord), asm.Mov.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, tsMeta, asm.R1, asm.DWord))
		g.place(keep)
	}
	g.emit(asm.StoreMem(asm.R0, tsEpoch, asm.R3, asm.DWord))
}

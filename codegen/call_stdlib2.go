package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/probe"
	"gtrace/sema"
)

// helperDPath names bpf_d_path in -k warnings, as bpftrace does.
const helperDPath = "d_path"

// find looks @m[key] up once and sets R0 to whether it is there; when
// it is, the value is copied into the variable, converted as `$v =
// @m[key]` would convert it.
func (g *gen) find(args []ast.Expr) {
	m := args[0].(*ast.Map)
	v := g.prog.Vars[args[2].(*ast.Var)]
	key, l := g.buildKey(m.Name, args[1:2])
	off := g.varOffset(v)
	g.lookup(l, key)
	missing, end := g.newLabel(), g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, missing))
	switch {
	case v.Type.IsScalar():
		g.emit(asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord))
		if !fits(l.Value, v.Type) {
			g.truncate(v.Type)
		}
		g.emit(asm.StoreMem(g.frame, int16(off), asm.R0, asm.DWord))
	case sameLayout(l.Value, v.Type):
		g.emit(asm.Mov.Reg(regMapVal, asm.R0))
		g.copyMem(regScratch, off, regMapVal, 0, v.Type.Size)
	default:
		// A shorter string or narrower tuple than the variable's.
		tmp := g.alloc(l.Value.Size)
		g.emit(asm.Mov.Reg(regMapVal, asm.R0))
		g.copyMem(regScratch, tmp, regMapVal, 0, l.Value.Size)
		g.convert(off, v.Type, tmp, l.Value)
	}
	g.emit(asm.Mov.Imm(asm.R0, 1), asm.Ja.Label(end))
	g.place(missing)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.place(end)
}

// override makes the probed function return rc without running, with
// bpf_override_return.
func (g *gen) override(rc ast.Expr) {
	g.scalar(rc)
	g.emit(asm.Mov.Reg(asm.R2, asm.R0), asm.Mov.Reg(asm.R1, regCtx), asm.FnOverrideReturn.Call())
}

// signalThread sends a signal to the current thread. A number known
// only when the probe runs is checked then, with bpftrace's error; a
// signal the kernel refuses is warned about, with its error code.
func (g *gen) signalThread(call *ast.Call) {
	if s, ok := call.Args[0].(*ast.StrLit); ok {
		g.loadImm(asm.R0, int64(sema.SignalNumber(s.Value)))
	} else {
		g.scalar(call.Args[0])
		g.emit(asm.LSh.Imm(asm.R0, 32), asm.RSh.Imm(asm.R0, 32)) // a uint32, as bpftrace's
	}
	bad, end := g.newLabel(), g.newLabel()
	g.emit(
		asm.JEq.Imm(asm.R0, 0, bad),
		asm.JGT.Imm(asm.R0, 64, bad),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.FnSendSignalThread.Call(),
		asm.JEq.Imm(asm.R0, 0, end),
	)
	g.valueEvent(call, EvWarnf, "signal call failed with error %d", sema.Int64)
	g.emit(asm.Ja.Label(end))
	g.place(bad)
	g.valueEvent(call, EvErrorf, "signal_thread() expects an integer between 1 and 64 (inclusive). Got %d", sema.Uint32)
	g.place(end)
}

// valueEvent sends an errorf() or warnf() record at call, of format
// with R0, of type t, as its one argument.
func (g *gen) valueEvent(call *ast.Call, kind EventKind, format string, t *sema.Type) {
	id := len(g.out.Events)
	g.out.Events = append(g.out.Events, &Event{Kind: kind, Format: format, At: call.Span(), Expanded: g.prog.Expanded[call],
		Args: []*sema.Type{sema.Slot(t)}, Offsets: []int{eventHeader}, Size: eventHeader + 8})
	buf := g.alloc(eventHeader + 8)
	g.emit(asm.StoreMem(regScratch, int16(buf+eventHeader), asm.R0, asm.DWord))
	g.send(id, buf, eventHeader+8)
}

// path writes the path bpf_d_path makes of a struct path at dst. A path
// longer than the string keeps its end: the kernel fills the buffer
// from its end, and leaves what fits when it runs out of room.
func (g *gen) path(call *ast.Call, dst int) {
	size := g.typ(call).Size
	g.zeroMem(regScratch, dst, size)
	g.scalar(call.Args[0])
	g.emit(asm.Mov.Reg(asm.R1, asm.R0))
	g.scratchPtr(asm.R2, dst)
	g.emit(asm.Mov.Imm(asm.R3, int32(size)), asm.FnDPath.Call())
	if g.opts.HelperErrors {
		ok := g.newLabel()
		g.emit(asm.JSGE.Imm(asm.R0, 0, ok))
		g.helperError(helperDPath, call)
		g.place(ok)
	}
}

// mapUnwatched holds a flag per program, raised for the watchpoints
// that unwatch() removed.
const mapUnwatched = "unwatched"

// unwatchMap reports whether any program calls unwatch(), and then
// declares the map of flags: only then do watchpoint programs check
// theirs.
func (g *gen) unwatchMap() bool {
	for _, p := range g.info.Progs {
		for _, f := range p.Funcs {
			if f == sema.FUnwatch {
				if g.out.Spec.Maps[mapUnwatched] == nil {
					g.out.Spec.Maps[mapUnwatched] = &ebpf.MapSpec{Name: mapUnwatched, Type: ebpf.Array,
						KeySize: 4, ValueSize: 8, MaxEntries: uint32(len(g.info.Progs))}
				}
				return true
			}
		}
	}
	return false
}

// unwatch removes the watchpoints on addr: it raises the flag of each
// watchpoint program on that address, which then returns at once. The
// breakpoints stay until the links are released, as every probe's do
// (see stopCheck).
func (g *gen) unwatch(addr ast.Expr) {
	g.unwatchMap()
	g.scalar(addr)
	slot := g.pushSlot()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
	for i, p := range g.info.Progs {
		if p.Probe.Kind != probe.Watchpoint {
			continue
		}
		next := g.newLabel()
		g.emit(asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord))
		g.loadImm(asm.R1, int64(p.Probe.Address))
		g.emit(asm.JNE.Reg(asm.R0, asm.R1, next))
		g.lookupIndex(mapUnwatched, i, next)
		g.emit(asm.StoreImm(asm.R0, 0, 1, asm.Word))
		g.place(next)
	}
	g.popSlot()
}

// unwatchedCheck ends a watchpoint program whose watchpoint unwatch()
// removed.
func (g *gen) unwatchedCheck(exit string) {
	if g.prog.Probe.Kind != probe.Watchpoint || !g.unwatchMap() {
		return
	}
	g.lookupIndex(mapUnwatched, g.index, exit)
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.JNE.Imm(asm.R1, 0, exit),
	)
}

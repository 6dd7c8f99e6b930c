package codegen

import (
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// exprStmt generates an expression evaluated for its effect.
func (g *gen) exprStmt(e ast.Expr) {
	if t, ok := e.(*ast.Ternary); ok && t.Then != nil && g.typ(e).Kind == sema.Void {
		g.ternary(t, g.exprStmt) // c ? printf(...) : printf(...), an if
		return
	}
	call, ok := e.(*ast.Call)
	if !ok {
		if t := g.typ(e); t.IsScalar() {
			g.scalar(e)
		} else {
			g.composite(e, -1)
		}
		return
	}
	args := call.Args
	switch f := g.prog.Funcs[call]; f {
	case sema.FPrintf, sema.FCat, sema.FSystem:
		if f == sema.FPrintf && g.seqPrintf(args) {
			return
		}
		kind := map[sema.Func]EventKind{sema.FPrintf: EvPrintf, sema.FCat: EvCat, sema.FSystem: EvSystem}[f]
		g.event(&Event{Kind: kind, Format: args[0].(*ast.StrLit).Value}, args[1:])
	case sema.FExit:
		if len(args) == 0 {
			args = []ast.Expr{&ast.IntLit{}}
			g.prog.Types[args[0]] = sema.Int64
		}
		g.event(&Event{Kind: EvExit}, args)
	case sema.FTime:
		format := "%H:%M:%S\n"
		if len(args) == 1 {
			format = args[0].(*ast.StrLit).Value
		}
		g.event(&Event{Kind: EvTime, Format: format}, nil)
	case sema.FPrint:
		if m, ok := args[0].(*ast.Map); ok && len(m.Keys) == 0 {
			ev := &Event{Kind: EvPrintMap, Map: g.out.Maps[m.Name]}
			if len(args) > 1 {
				ev.Top = g.constInt(args[1])
			}
			if len(args) > 2 {
				ev.Div = g.constInt(args[2])
			}
			g.event(ev, nil)
			return
		}
		g.event(&Event{Kind: EvPrintValue}, args)
	case sema.FClear, sema.FZero:
		kind := EvClear
		if f == sema.FZero {
			kind = EvZero
		}
		g.event(&Event{Kind: kind, Map: g.out.Maps[args[0].(*ast.Map).Name]}, nil)
	case sema.FDelete:
		g.deleteKey(args)
	case sema.FErrorf, sema.FWarnf, sema.FDebugf:
		g.messageStmt(call)
	case sema.FAssert:
		g.assert(call)
	case sema.FOverride:
		g.override(args[0])
	case sema.FSignalThread:
		g.signalThread(call)
	case sema.FUnwatch:
		g.unwatch(args[0])
	case sema.FJoin:
		sep := " "
		if len(args) == 2 {
			sep = args[1].(*ast.StrLit).Value
		}
		g.join(args[0], sep)
	case sema.FSignal:
		if s, ok := args[0].(*ast.StrLit); ok {
			g.loadImm(asm.R1, int64(sema.SignalNumber(s.Value)))
		} else {
			g.scalar(args[0])
			g.emit(asm.Mov.Reg(asm.R1, asm.R0))
		}
		g.emit(asm.FnSendSignal.Call())
	default:
		if t := g.typ(e); t.IsScalar() {
			g.scalar(e)
		} else if t.Kind != sema.Void {
			g.composite(e, -1)
		}
	}
}

// keyArg builds the key of delete() and has_key(), which take either
// @m[key] or @m, key.
func (g *gen) keyArg(args []ast.Expr) (int, *MapLayout) {
	m := args[0].(*ast.Map)
	if len(args) == 2 {
		return g.buildKey(m.Name, args[1:])
	}
	return g.buildKey(m.Name, m.Keys)
}

// event sends a record of ev's kind with the given arguments through the
// ring buffer. A full ring buffer is counted in the lost map.
func (g *gen) event(ev *Event, args []ast.Expr) {
	id := len(g.out.Events)
	g.out.Events = append(g.out.Events, ev)
	off := eventHeader
	for _, a := range args {
		t := g.typ(a)
		if t.IsScalar() {
			t = widenInt(t)
		}
		ev.Args = append(ev.Args, t)
		ev.Offsets = append(ev.Offsets, off)
		off += align8(t.Size)
	}
	ev.Size = off
	buf := g.alloc(ev.Size)
	for i, a := range args {
		g.into(a, ev.Args[i], buf+ev.Offsets[i])
	}
	g.send(id, buf, ev.Size)
}

// send stamps the record at scratch offset buf with event id and writes
// its size bytes to the ring buffer. A refused record is counted in the
// lost map.
func (g *gen) send(id, buf, size int) {
	g.loadImm(asm.R1, int64(id))
	g.emit(asm.StoreMem(regScratch, int16(buf), asm.R1, asm.DWord))
	g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(mapEvents))
	g.scratchPtr(asm.R2, buf)
	g.emit(asm.Mov.Imm(asm.R3, int32(size)), asm.Mov.Imm(asm.R4, 0), asm.FnRingbufOutput.Call())
	ok := g.newLabel()
	g.emit(asm.JEq.Imm(asm.R0, 0, ok))
	g.countFailure(mapLost, 0)
	g.place(ok)
}

// join reads up to sema.JoinArgs strings through the array of pointers
// arr into one record, each in a slot of sema.JoinArgSize bytes; user
// space joins them up to the first NULL pointer or empty string.
func (g *gen) join(arr ast.Expr, sep string) {
	id := len(g.out.Events)
	g.out.Events = append(g.out.Events, &Event{Kind: EvJoin, Format: sep, Size: eventHeader + sema.JoinArgs*sema.JoinArgSize})
	// Every join() of a program shares one record: it is live only
	// while the call runs, and two would not fit in scratch.
	if g.joinBuf < 0 {
		g.joinBuf = g.alloc(eventHeader + sema.JoinArgs*sema.JoinArgSize)
	}
	buf := g.joinBuf
	for i := 0; i < sema.JoinArgs; i++ {
		g.emit(asm.StoreImm(regScratch, int16(buf+eventHeader+i*sema.JoinArgSize), 0, asm.Byte))
	}
	g.scalar(arr)
	slot := g.pushSlot()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
	done := g.newLabel()
	for i := 0; i < sema.JoinArgs; i++ {
		// The i-th pointer, read into the spare slot at -8.
		g.emit(
			asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, -8),
			asm.Mov.Imm(asm.R2, 8),
			asm.LoadMem(asm.R3, asm.RFP, slot, asm.DWord), asm.Add.Imm(asm.R3, int32(8*i)),
			asm.FnProbeRead.Call(),
			asm.JNE.Imm(asm.R0, 0, done),
			asm.LoadMem(asm.R3, asm.RFP, -8, asm.DWord),
			asm.JEq.Imm(asm.R3, 0, done),
		)
		g.scratchPtr(asm.R1, buf+eventHeader+i*sema.JoinArgSize)
		g.emit(asm.Mov.Imm(asm.R2, sema.JoinArgSize), asm.FnProbeReadStr.Call())
	}
	g.place(done)
	g.popSlot()
	g.send(id, buf, eventHeader+sema.JoinArgs*sema.JoinArgSize)
}

// widenInt is the 8-byte form an integer takes in an event.
func widenInt(t *sema.Type) *sema.Type {
	if t.Kind == sema.Int && t.Size != 8 {
		return sema.Slot(t)
	}
	return t
}

// scalarCall evaluates a call with an integer-like result into R0.
func (g *gen) scalarCall(call *ast.Call) {
	args := call.Args
	switch g.prog.Funcs[call] {
	case sema.FKsym, sema.FStrftime:
		g.scalar(args[len(args)-1])
	case sema.FNsecs:
		clock := "boot"
		if len(args) == 1 {
			clock = args[0].(*ast.Ident).Name
		}
		if clock == "sw_tai" {
			g.swTai()
			break
		}
		fn := map[string]asm.BuiltinFunc{"boot": asm.FnKtimeGetBootNs, "monotonic": asm.FnKtimeGetNs, "tai": asm.FnKtimeGetTaiNs}[clock]
		g.emit(fn.Call())
	case sema.FKaddr:
		g.loadImm(asm.R0, g.prog.Consts[call])
	case sema.FUaddr:
		g.loadImm(asm.R0, g.prog.Consts[call])
		g.addLoadBias()
	case sema.FKstack:
		g.stackID(g.typ(call), 0)
	case sema.FBswap:
		g.scalar(args[0])
		t := g.typ(call)
		if t.Size == 1 {
			// A byte is its own swap, and BPF has no 8-bit one; keep
			// the byte, zero-extended as the wider swaps leave theirs.
			g.emit(asm.And.Imm(asm.R0, 0xff))
		} else {
			g.emit(asm.HostTo(asm.BE, asm.R0, sizeOf(t.Size)))
		}
	case sema.FStrncmp:
		g.strncmp(args[0], args[1], int(g.constInt(args[2])))
	case sema.FPid, sema.FTid, sema.FStrlen, sema.FStrstr, sema.FMemcmp:
		g.stdlibScalar(call)
	case sema.FLen:
		if m, ok := args[0].(*ast.Map); ok {
			g.mapLen(g.out.Maps[m.Name])
			break
		}
		g.stackLen(args[0])
	case sema.FStrcontains:
		g.strcontains(args[0], args[1])
	case sema.FDelete:
		g.deleteKey(args)
		g.boolify(asm.JEq) // the helper returns 0 when it deleted
	case sema.FPercpuKaddr, sema.FSocketCookie, sema.FSkboutput, sema.FWriteUser, sema.FReg:
		g.netScalar(call)
	case sema.FFind:
		g.find(args)
	case sema.FHasKey:
		key, l := g.keyArg(args)
		g.lookup(l, key)
		g.boolify(asm.JNE)
	default:
		g.fail(call, "%s() has no integer value", call.Name)
	}
}

// strncmp sets R0 to 0 when the first n bytes of a and b match (up to a
// NUL in both), and to 1 otherwise.
func (g *gen) strncmp(a, b ast.Expr, n int) {
	pa, pb := g.composite(a, -1), g.composite(b, -1)
	n = min(n, g.typ(a).Size, g.typ(b).Size)
	differ, same, end := g.newLabel(), g.newLabel(), g.newLabel()
	for i := 0; i < n; i++ {
		g.emit(
			asm.LoadMem(asm.R1, regScratch, int16(pa+i), asm.Byte),
			asm.LoadMem(asm.R2, regScratch, int16(pb+i), asm.Byte),
			asm.JNE.Reg(asm.R1, asm.R2, differ),
			asm.JEq.Imm(asm.R1, 0, same),
		)
	}
	g.place(same)
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Ja.Label(end))
	g.place(differ)
	g.emit(asm.Mov.Imm(asm.R0, 1))
	g.place(end)
}

// compositeCall evaluates a call with an in-memory result into dst.
func (g *gen) compositeCall(call *ast.Call, dst int) {
	args := call.Args
	t := g.typ(call)
	switch g.prog.Funcs[call] {
	case sema.FStr:
		if g.typ(args[0]).Kind == sema.String {
			g.into(args[0], t, dst)
			return
		}
		if len(args) == 2 {
			g.strRead(args, t.Size, dst)
			return
		}
		g.str(args, t, dst)
	case sema.FUstack:
		g.userStack(t, dst)
	case sema.FDwUstack:
		g.dwUserStack(t, call, dst)
	case sema.FUsym:
		g.scalar(args[0])
		g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord))
		g.storePid(dst + 8)
	case sema.FBuf:
		g.buf(args, t, dst)
	case sema.FNtop:
		g.ntop(args, dst)
	case sema.FPton, sema.FMacaddr, sema.FCgroupPath:
		g.netComposite(call, dst)
	case sema.FStrerror, sema.FSignalName, sema.FSyscallName, sema.FStrConcat, sema.FComm:
		g.stdlibComposite(call, dst)
	case sema.FPath:
		g.path(call, dst)
	default:
		g.fail(call, "%s() has no value", call.Name)
	}
}

// strRead reads str(p, n)'s string of up to size bytes, NUL included,
// into dst. A length known only at run time is bounded by size for the
// verifier.
func (g *gen) strRead(args []ast.Expr, size, dst int) {
	g.zeroMem(regScratch, dst, size)
	g.scalar(args[1])
	slot := g.pushSlot()
	defer g.popSlot()
	ok := g.newLabel()
	g.emit(asm.JLE.Imm(asm.R0, int32(size), ok), asm.Mov.Imm(asm.R0, int32(size)))
	g.place(ok)
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
	g.scalar(args[0])
	g.emit(asm.Mov.Reg(asm.R3, asm.R0), asm.LoadMem(asm.R2, asm.RFP, slot, asm.DWord))
	g.scratchPtr(asm.R1, dst)
	// The generic helper reads user and kernel addresses alike on
	// x86_64, as str() must for both.
	g.emit(asm.FnProbeReadStr.Call())
}

// buf fills a buffer at dst: its length, then the bytes.
func (g *gen) buf(args []ast.Expr, t *sema.Type, dst int) {
	n := t.Size - 8
	if at := g.typ(args[0]); at.Kind == sema.Array || at.Kind == sema.String {
		src := g.composite(args[0], -1)
		g.loadImm(asm.R1, int64(n))
		g.emit(asm.StoreMem(regScratch, int16(dst), asm.R1, asm.DWord))
		g.copyMem(regScratch, dst+8, regScratch, src, n)
		return
	}
	g.scalar(args[0])
	slot := g.pushSlot()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
	if _, ok := args[1].(*ast.IntLit); ok {
		g.loadImm(asm.R0, int64(n))
	} else {
		// A length known only at run time, bounded for the verifier.
		g.zeroMem(regScratch, dst+8, n)
		g.scalar(args[1])
		ok := g.newLabel()
		g.emit(asm.JLE.Imm(asm.R0, int32(n), ok), asm.Mov.Imm(asm.R0, int32(n)))
		g.place(ok)
	}
	g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord), asm.Mov.Reg(asm.R2, asm.R0))
	g.scratchPtr(asm.R1, dst+8)
	g.emit(asm.LoadMem(asm.R3, asm.RFP, slot, asm.DWord), asm.FnProbeRead.Call())
	g.popSlot()
}

// ntop fills an address at dst: its family, then 16 bytes, of which an
// IPv4 address uses 4.
func (g *gen) ntop(args []ast.Expr, dst int) {
	addr := args[len(args)-1]
	at := g.typ(addr)
	g.zeroMem(regScratch, dst+8, 16)
	if at.Kind == sema.Array {
		src := g.composite(addr, -1)
		g.copyMem(regScratch, dst+8, regScratch, src, at.Size)
	} else {
		g.scalar(addr)
		g.emit(asm.StoreMem(regScratch, int16(dst+8), asm.R0, asm.Word))
	}
	if len(args) == 2 {
		g.scalar(args[0])
	} else if at.Kind == sema.Array && at.Len == 16 {
		g.loadImm(asm.R0, unix.AF_INET6)
	} else {
		g.loadImm(asm.R0, unix.AF_INET)
	}
	g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord))
}

// deleteKey deletes the key that delete()'s arguments name; R0 holds the
// helper's result, 0 when the key was there.
func (g *gen) deleteKey(args []ast.Expr) {
	key, l := g.keyArg(args)
	g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(l.BPFName))
	g.scratchPtr(asm.R2, key)
	g.emit(asm.FnMapDeleteElem.Call())
}

// swTai approximates CLOCK_TAI as the boot clock plus the offset between
// the two that the runtime measured when tracing started.
func (g *gen) swTai() {
	end := g.newLabel()
	g.lookupIndex(mapGlobals, 0, end) // R0 is 0 when missing
	g.emit(
		asm.LoadMem(asm.R1, asm.R0, globalTai, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.FnKtimeGetBootNs.Call(),
		asm.LoadMem(asm.R1, asm.RFP, -8, asm.DWord),
		asm.Add.Reg(asm.R0, asm.R1),
	)
	g.place(end)
}

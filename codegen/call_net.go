package codegen

import (
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/probe"
	"gtrace/sema"
)

// pseudoBTFID marks a 64-bit load of a kernel variable by its BTF id
// (BPF_PSEUDO_BTF_ID), which cilium/ebpf has no name for.
const pseudoBTFID = asm.R3

// messageStmt generates errorf and warnf, sent to user space as printf
// is, and debugf, printed by the kernel into its trace buffer.
func (g *gen) messageStmt(call *ast.Call) {
	args := call.Args
	format := args[0].(*ast.StrLit).Value
	switch g.prog.Funcs[call] {
	case sema.FErrorf:
		g.event(&Event{Kind: EvErrorf, Format: format, At: call.Span(), Expanded: g.prog.Expanded[call]}, args[1:])
	case sema.FWarnf:
		g.event(&Event{Kind: EvWarnf, Format: format, At: call.Span(), Expanded: g.prog.Expanded[call]}, args[1:])
	case sema.FDebugf:
		g.debugf(format, args[1:])
	}
}

// debugf calls bpf_trace_printk with the format, NUL-terminated, and up
// to three arguments: integers by value, strings by their address.
func (g *gen) debugf(format string, args []ast.Expr) {
	type arg struct {
		slot int16 // an integer's stack slot
		off  int   // a string's scratch offset, when slot is 0
	}
	vals := make([]arg, len(args))
	for i, a := range args {
		if g.typ(a).IsScalar() {
			g.scalar(a)
			vals[i].slot = g.pushSlot()
			g.emit(asm.StoreMem(asm.RFP, vals[i].slot, asm.R0, asm.DWord))
			continue
		}
		vals[i].off = g.composite(a, -1)
	}
	fmtOff := g.alloc(len(format) + 1)
	g.storeBytes(fmtOff, []byte(format), len(format)+1)
	for i, v := range vals {
		reg := asm.R3 + asm.Register(i)
		if v.slot != 0 {
			g.emit(asm.LoadMem(reg, asm.RFP, v.slot, asm.DWord))
		} else {
			g.scratchPtr(reg, v.off)
		}
	}
	g.scratchPtr(asm.R1, fmtOff)
	g.emit(asm.Mov.Imm(asm.R2, int32(len(format)+1)), asm.FnTracePrintk.Call())
	for _, v := range vals {
		if v.slot != 0 {
			g.popSlot()
		}
	}
}

// netScalar evaluates the helpers with integer results into R0.
func (g *gen) netScalar(call *ast.Call) {
	args := call.Args
	switch g.prog.Funcs[call] {
	case sema.FPercpuKaddr:
		g.percpuKaddr(call)
	case sema.FSocketCookie:
		g.scalar(args[0])
		if g.trackedArg(args[0]) {
			// The helper makes a cookie for a socket that has none.
			g.emit(asm.Mov.Reg(asm.R1, asm.R0), asm.FnGetSocketCookie.Call())
			return
		}
		// The socket's cookie as it is, 0 for a NULL socket.
		g.readKernel(g.prog.Consts[call], 8)
	case sema.FSkboutput:
		g.skboutput(call)
	case sema.FWriteUser:
		g.writeUser(args)
	case sema.FReg:
		off, _ := sema.RegOffset(args[0].(*ast.StrLit).Value)
		g.emit(asm.LoadMem(asm.R0, regCtx, int16(off), asm.DWord))
	}
}

// trackedArg reports whether e is an fentry or fexit argument as the
// program receives it, a pointer whose type the verifier knows, as the
// helpers on kernel objects want.
func (g *gen) trackedArg(e ast.Expr) bool {
	f, ok := e.(*ast.Field)
	return ok && g.prog.Args[f] != nil && g.prog.Probe.Context() == probe.BTFArgs
}

// readKernel sets R0 to the n bytes at R0 + off, or 0 when R0 is NULL
// or the read fails.
func (g *gen) readKernel(off int64, n int) {
	slot := g.pushSlot()
	g.emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, slot, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, int32(off)),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, int32(slot)),
		asm.Mov.Imm(asm.R2, int32(n)),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord),
	)
	g.popSlot()
}

// percpuKaddr sets R0 to the address of a per-CPU kernel variable on the
// CPU given, or on this one. The helpers return a pointer the verifier
// tracks; copying it through the stack with a read makes it a number,
// which the program can compare, offset and keep anywhere.
func (g *gen) percpuKaddr(call *ast.Call) {
	load := asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R1, Src: pseudoBTFID, Constant: g.prog.Consts[call]}
	if len(call.Args) == 2 {
		g.scalar(call.Args[1])
		g.emit(asm.Mov.Reg(asm.R2, asm.R0), load, asm.FnPerCpuPtr.Call())
	} else {
		g.emit(load, asm.FnThisCpuPtr.Call())
	}
	slot := g.pushSlot()
	g.emit(
		asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, int32(slot)),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, int32(slot)),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R0, asm.RFP, slot, asm.DWord),
	)
	g.popSlot()
}

// skboutput reads up to sema.SkbOutputMax bytes of a packet from its
// sk_buff's data into a record, which user space writes to the pcap
// file; R0 is 0, or the error of the read or of the ring buffer.
func (g *gen) skboutput(call *ast.Call) {
	args := call.Args
	id := len(g.out.Events)
	size := eventHeader + 16 + sema.SkbOutputMax
	g.out.Events = append(g.out.Events, &Event{Kind: EvSkbOutput, Format: args[0].(*ast.StrLit).Value,
		Offset: g.constInt(args[3]), Size: size})
	buf := g.alloc(size)
	// The length, 0 below, bounded for the verifier, kept in a stack
	// slot, which keeps its bounds.
	g.scalar(args[2])
	small, bounded := g.newLabel(), g.newLabel()
	g.emit(asm.JSGE.Imm(asm.R0, 0, small), asm.Mov.Imm(asm.R0, 0))
	g.place(small)
	g.emit(asm.JLE.Imm(asm.R0, int32(sema.SkbOutputMax), bounded), asm.Mov.Imm(asm.R0, int32(sema.SkbOutputMax)))
	g.place(bounded)
	slot := g.pushSlot()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord), asm.StoreMem(regScratch, int16(buf+eventHeader+8), asm.R0, asm.DWord))
	// The packet's data, from the address in skb->data.
	g.scalar(args[1])
	g.readKernel(g.prog.Consts[call], 8)
	g.emit(asm.Mov.Reg(asm.R3, asm.R0), asm.LoadMem(asm.R2, asm.RFP, slot, asm.DWord))
	g.popSlot()
	g.scratchPtr(asm.R1, buf+eventHeader+16)
	done := g.newLabel()
	g.emit(asm.FnProbeReadKernel.Call(), asm.JNE.Imm(asm.R0, 0, done))
	g.emit(asm.FnKtimeGetBootNs.Call(), asm.StoreMem(regScratch, int16(buf+eventHeader), asm.R0, asm.DWord))
	g.loadImm(asm.R1, int64(id))
	g.emit(asm.StoreMem(regScratch, int16(buf), asm.R1, asm.DWord))
	g.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(mapEvents))
	g.scratchPtr(asm.R2, buf)
	g.emit(asm.Mov.Imm(asm.R3, int32(size)), asm.Mov.Imm(asm.R4, 0), asm.FnRingbufOutput.Call())
	g.place(done)
}

// writeUser copies up to the size of the value src from the program's
// memory to the user address dst; R0 is true when the helper wrote.
func (g *gen) writeUser(args []ast.Expr) {
	src := g.composite(args[1], -1)
	size := g.typ(args[1]).Size
	g.scalar(args[0])
	slot := g.pushSlot()
	g.emit(asm.StoreMem(asm.RFP, slot, asm.R0, asm.DWord))
	g.scalar(args[2])
	// The length, bounded to the value for the verifier; nothing to
	// write below 1.
	none, bounded, end := g.newLabel(), g.newLabel(), g.newLabel()
	g.emit(asm.JSLT.Imm(asm.R0, 1, none), asm.JLE.Imm(asm.R0, int32(size), bounded), asm.Mov.Imm(asm.R0, int32(size)))
	g.place(bounded)
	g.emit(asm.Mov.Reg(asm.R3, asm.R0), asm.LoadMem(asm.R1, asm.RFP, slot, asm.DWord))
	g.scratchPtr(asm.R2, src)
	g.emit(asm.FnProbeWriteUser.Call())
	g.boolify(asm.JEq)
	g.emit(asm.Ja.Label(end))
	g.place(none)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.place(end)
	g.popSlot()
}

// netComposite evaluates the helpers with in-memory results into dst.
func (g *gen) netComposite(call *ast.Call, dst int) {
	arg := call.Args[0]
	switch g.prog.Funcs[call] {
	case sema.FPton:
		b, _ := sema.Pton(arg.(*ast.StrLit).Value)
		g.storeBytes(dst, b, len(b))
	case sema.FCgroupPath:
		g.scalar(arg)
		g.emit(asm.StoreMem(regScratch, int16(dst), asm.R0, asm.DWord))
	case sema.FMacaddr:
		if t := g.typ(arg); !t.IsScalar() {
			src := g.composite(arg, -1)
			g.copyMem(regScratch, dst, regScratch, src, 6)
			return
		}
		g.scalar(arg)
		g.emit(asm.Mov.Reg(asm.R3, asm.R0))
		g.zeroMem(regScratch, dst, 6)
		g.scratchPtr(asm.R1, dst)
		// The generic helper reads user and kernel addresses alike on
		// x86_64.
		g.emit(asm.Mov.Imm(asm.R2, 6), asm.FnProbeRead.Call())
	}
}

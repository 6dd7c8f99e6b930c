package codegen

import (
	"fmt"
	"strings"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"gtrace/kernel"
	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/probe"
	"gtrace/sema"
)

// stdlibBuiltin evaluates ctx, usermode and username into R0.
func (g *gen) stdlibBuiltin(e *ast.Ident) {
	switch g.prog.Builtins[e] {
	case builtin.Ctx:
		g.emit(asm.Mov.Reg(asm.R0, regCtx))
	case builtin.Username:
		g.emit(asm.FnGetCurrentUidGid.Call(), asm.LSh.Imm(asm.R0, 32), asm.RSh.Imm(asm.R0, 32))
	case builtin.Usermode:
		g.usermode()
	}
}

// ptRegsCS is the offset of cs in x86_64's struct pt_regs, which also
// starts struct bpf_perf_event_data.
const ptRegsCS = 136

// usermode sets R0 to 1 when the probe interrupted user code: the saved
// cs is at privilege level 3. begin and end run in gtrace itself, a user
// process, as in bpftrace; probes without saved registers are in the
// kernel.
func (g *gen) usermode() {
	switch g.prog.Probe.Context() {
	case probe.Registers, probe.USDTArgs, probe.PerfSample:
		g.emit(
			asm.LoadMem(asm.R0, regCtx, ptRegsCS, asm.DWord),
			asm.And.Imm(asm.R0, 3),
			asm.Xor.Imm(asm.R0, 3),
		)
		g.boolify(asm.JEq)
	default:
		v := int64(0)
		if k := g.prog.Probe.Kind; k == probe.Begin || k == probe.End {
			v = 1
		}
		g.loadImm(asm.R0, v)
	}
}

// procPidInitIno is the inode of the initial pid namespace.
const procPidInitIno = 0xeffffffc

// pidNamespace is the pid namespace gtrace runs in, as
// bpf_get_ns_current_pid_tgid takes it: its device and inode, both 0
// when it cannot be known.
var pidNamespace = sync.OnceValues(func() (dev, ino uint64) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0, 0
	}
	return st.Dev, st.Ino
})

// pidTid sets R0 to the current process id (tid: thread id), as seen
// from gtrace's pid namespace, or from the initial one when init is set.
func (g *gen) pidTid(tid, init bool) {
	dev, ino := pidNamespace()
	if init || ino == 0 || ino == procPidInitIno {
		g.emit(asm.FnGetCurrentPidTgid.Call())
		if tid {
			g.emit(asm.LSh.Imm(asm.R0, 32), asm.RSh.Imm(asm.R0, 32))
		} else {
			g.emit(asm.RSh.Imm(asm.R0, 32))
		}
		return
	}
	// struct bpf_pidns_info { u32 pid; u32 tgid; } in the spare slot;
	// the helper zeroes it when the task is outside the namespace.
	g.loadImm(asm.R1, int64(dev))
	g.loadImm(asm.R2, int64(ino))
	off := int16(-4)
	if tid {
		off = -8
	}
	g.emit(
		asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, -8),
		asm.Mov.Imm(asm.R4, 8),
		asm.FnGetNsCurrentPidTgid.Call(),
		asm.LoadMem(asm.R0, asm.RFP, off, asm.Word),
	)
}

// stdlibScalar evaluates the standard library's integer functions.
func (g *gen) stdlibScalar(call *ast.Call) {
	args := call.Args
	switch f := g.prog.Funcs[call]; f {
	case sema.FPid, sema.FTid:
		init := len(args) == 1 && args[0].(*ast.Ident).Name == "init"
		g.pidTid(f == sema.FTid, init)
	case sema.FStrlen:
		off := g.composite(args[0], -1)
		g.strlen(off, g.typ(args[0]).Size)
	case sema.FStrstr:
		g.strstr(args[0], args[1])
	case sema.FMemcmp:
		g.memcmp(args)
	}
}

// strlen sets R0 to the length of the string at scratch off, of at most
// size bytes, in a loop bounded by size.
func (g *gen) strlen(off, size int) {
	top, end := g.newLabel(), g.newLabel()
	g.scratchPtr(asm.R1, off)
	g.emit(asm.Mov.Imm(asm.R0, 0))
	g.place(top)
	g.emit(
		asm.JGE.Imm(asm.R0, int32(size), end),
		asm.Mov.Reg(asm.R2, asm.R1), asm.Add.Reg(asm.R2, asm.R0),
		asm.LoadMem(asm.R2, asm.R2, 0, asm.Byte),
		asm.JEq.Imm(asm.R2, 0, end),
		asm.Add.Imm(asm.R0, 1),
		asm.Ja.Label(top),
	)
	g.place(end)
}

// memcmp sets R0 to the difference of the first bytes that differ in
// the first count bytes of two values, 0 if none: as C's memcmp, within
// the smaller value.
func (g *gen) memcmp(args []ast.Expr) {
	a, b := g.composite(args[0], -1), g.composite(args[1], -1)
	n := min(g.typ(args[0]).Size, g.typ(args[1]).Size)
	g.scalar(args[2])
	top, end := g.newLabel(), g.newLabel()
	g.emit(
		asm.Mov.Reg(asm.R4, asm.R0),
		asm.Mov.Imm(asm.R0, 0),
		asm.Mov.Imm(asm.R1, 0),
	)
	g.place(top)
	g.emit(
		asm.JGE.Reg(asm.R1, asm.R4, end),
		asm.JGE.Imm(asm.R1, int32(n), end),
		asm.Mov.Reg(asm.R2, regScratch), asm.Add.Reg(asm.R2, asm.R1),
		asm.LoadMem(asm.R2, asm.R2, int16(a), asm.Byte),
		asm.Mov.Reg(asm.R3, regScratch), asm.Add.Reg(asm.R3, asm.R1),
		asm.LoadMem(asm.R3, asm.R3, int16(b), asm.Byte),
		asm.Add.Imm(asm.R1, 1),
		asm.JEq.Reg(asm.R2, asm.R3, top),
		asm.Mov.Reg(asm.R0, asm.R2),
		asm.Sub.Reg(asm.R0, asm.R3),
	)
	g.place(end)
}

// stdlibComposite evaluates the standard library's string functions
// into scratch dst.
func (g *gen) stdlibComposite(call *ast.Call, dst int) {
	args := call.Args
	switch g.prog.Funcs[call] {
	case sema.FStrerror, sema.FSignalName, sema.FSyscallName:
		g.tableString(nameTables[call.Name], args[0], dst)
	case sema.FStrConcat:
		g.strConcat(args[0], args[1], dst)
	case sema.FComm:
		g.commFromPid(call, dst)
	}
}

// commFromPid writes comm(pid) at dst: the comm of the task the kfunc
// bpf_task_from_pid finds, which is released once the comm is copied;
// "N/A" and a warning when no task has the pid.
func (g *gen) commFromPid(call *ast.Call, dst int) {
	from, err := kernel.KfuncCall("bpf_task_from_pid")
	if err != nil {
		g.fail(call, "comm(pid): %v", err)
		return
	}
	release, err := kernel.KfuncCall("bpf_task_release")
	if err != nil {
		g.fail(call, "comm(pid): %v", err)
		return
	}
	missing, end := g.newLabel(), g.newLabel()
	g.scalar(call.Args[0])
	pid, task := g.pushSlot(), g.pushSlot()
	defer g.popSlot()
	defer g.popSlot()
	g.emit(
		// A pid_t, as the kfunc takes it.
		asm.LSh.Imm(asm.R0, 32), asm.ArSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, pid, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R0),
		from,
		asm.JEq.Imm(asm.R0, 0, missing),
		// The task is a reference the program holds: spilled while
		// the comm is read, and handed back on every path.
		asm.StoreMem(asm.RFP, task, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R3, asm.R0), asm.Add.Imm(asm.R3, int32(g.prog.Consts[call])),
		asm.Mov.Imm(asm.R2, sema.TaskCommLen),
	)
	g.scratchPtr(asm.R1, dst)
	g.emit(
		asm.FnProbeReadKernel.Call(),
		asm.LoadMem(asm.R1, asm.RFP, task, asm.DWord),
		release,
		asm.Ja.Label(end),
	)
	g.place(missing)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, pid, asm.DWord))
	g.valueEvent(call, EvWarnf, "No such process (pid=%d)", sema.Int32)
	g.storeBytes(dst, []byte("N/A"), sema.TaskCommLen)
	g.place(end)
}

// strConcat writes a then b at dst, a string as long as both: b is
// copied with bpf_probe_read_kernel_str right after a's last char.
func (g *gen) strConcat(a, b ast.Expr, dst int) {
	na, nb := g.typ(a).Size, g.typ(b).Size
	// Zeroed whole, from dst, which is aligned as the stack wants.
	g.zeroMem(regScratch, dst, na+nb)
	g.composite(a, dst)
	src := g.composite(b, -1)
	g.strlen(dst, na)
	g.emit(asm.Mov.Reg(asm.R1, regScratch), asm.Add.Imm(asm.R1, int32(dst)), asm.Add.Reg(asm.R1, asm.R0))
	g.scratchPtr(asm.R3, src)
	g.emit(asm.Mov.Imm(asm.R2, int32(nb)), asm.FnProbeReadKernelStr.Call())
}

// nameTable is a table of strings by number, a read-only BPF array:
// strerror()'s, signal_name()'s and syscall_name()'s.
type nameTable struct {
	mapName string
	// names gives every number below len its string; other numbers
	// get unknown.
	names   func() []string
	unknown string
	// abs makes a negative number positive first, as errors are.
	abs bool
}

var nameTables = map[string]*nameTable{
	"strerror":     {mapName: "strerror", names: errnoMessages, unknown: "Unknown error", abs: true},
	"signal_name":  {mapName: "signal_names", names: signalNames, unknown: "N/A"},
	"syscall_name": {mapName: "syscall_names", names: syscallNames, unknown: "unknown"},
}

// tableString writes the string the table gives the number x at dst.
func (g *gen) tableString(tab *nameTable, x ast.Expr, dst int) {
	names := tab.names()
	if g.out.Spec.Maps[tab.mapName] == nil {
		spec := &ebpf.MapSpec{Name: tab.mapName, Type: ebpf.Array, KeySize: 4,
			ValueSize: sema.StrerrorSize, MaxEntries: uint32(len(names)), Flags: unix.BPF_F_RDONLY_PROG}
		for i, s := range names {
			v := make([]byte, sema.StrerrorSize)
			copy(v[:sema.StrerrorSize-1], s)
			spec.Contents = append(spec.Contents, ebpf.MapKV{Key: uint32(i), Value: v})
		}
		g.out.Spec.Maps[tab.mapName] = spec
	}
	missing, end := g.newLabel(), g.newLabel()
	g.scalar(x)
	// The number is an int, as bpftrace passes it: retval's -22 and
	// (uint32)-22 are both -22.
	g.emit(asm.LSh.Imm(asm.R0, 32), asm.ArSh.Imm(asm.R0, 32))
	if tab.abs {
		pos := g.newLabel()
		g.emit(asm.JSGE.Imm(asm.R0, 0, pos), asm.Neg.Imm(asm.R0, 0))
		g.place(pos)
	}
	g.emit(
		asm.JGE.Imm(asm.R0, int32(len(names)), missing),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(tab.mapName),
		asm.Mov.Reg(asm.R2, asm.RFP), asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, missing),
	)
	g.copyMem(regScratch, dst, asm.R0, 0, sema.StrerrorSize)
	g.emit(asm.Ja.Label(end))
	g.place(missing)
	g.storeBytes(dst, []byte(tab.unknown), sema.StrerrorSize)
	g.place(end)
}

// errnoMessages are the C library's messages for errno values, the
// strings strerror(3) gives.
func errnoMessages() []string {
	var msgs []string
	for e := range syscall.Errno(134) {
		msg := "Success"
		if e > 0 {
			msg = capitalize(e.Error())
		}
		if strings.HasPrefix(msg, "Errno ") {
			msg = "Unknown error"
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

// signalNames are the descriptions strsignal(3) gives signals 0 to 64.
func signalNames() []string {
	names := []string{"Unknown signal 0"}
	for s := syscall.Signal(1); s <= 64; s++ {
		switch {
		case s >= 34: // SIGRTMIN, as the C library numbers them
			names = append(names, fmt.Sprintf("Real-time signal %d", s-34))
		case strings.HasPrefix(s.String(), "signal "):
			names = append(names, fmt.Sprintf("Unknown signal %d", s))
		default:
			names = append(names, capitalize(s.String()))
		}
	}
	return names
}

// syscallNames are the x86_64 system calls' names by number.
func syscallNames() []string {
	byNr := kernel.SyscallNames()
	n := 0
	for nr := range byNr {
		n = max(n, nr+1)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = "unknown"
		if name, ok := byNr[i]; ok {
			names[i] = name
		}
	}
	return names
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// assert ends the script with exit code 1 and an error at the call
// when its condition is false, as bpftrace's assert().
func (g *gen) assert(call *ast.Call) {
	ok := g.newLabel()
	g.scalar(call.Args[0])
	g.emit(asm.JNE.Imm(asm.R0, 0, ok))
	msg := "assert failed: " + call.Args[1].(*ast.StrLit).Value
	g.event(&Event{Kind: EvWarning, Error: true, Format: msg, At: call.Span()}, nil)
	code := &ast.IntLit{At: call.At, Value: 1}
	g.prog.Types[code] = sema.Int64
	g.event(&Event{Kind: EvExit}, []ast.Expr{code})
	g.emit(asm.Ja.Label(g.exit))
	g.place(ok)
}

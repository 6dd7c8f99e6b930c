package floor

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Scripts is the number of scripts of the benchmark.
const Scripts = 18

// point is where a program attaches, as the script names it.
type point int

const (
	readEntry  point = iota // k:vfs_read, or sys_enter_read without kprobes
	readReturn              // kr:vfs_read, or sys_exit_read without kprobes
	sysEnter                // t:syscalls:sys_enter_read
	sysExit                 // t:syscalls:sys_exit_read
	libcEntry               // u:libc:__read
	libcReturn              // ur:libc:__read
)

// probe is one program of a floor and where it attaches.
type probe struct {
	name  string
	at    point
	insns asm.Instructions
}

// Limits as bpftrace's defaults: map entries, and frames in a stack.
const (
	mapEntries = 4096
	stackDepth = 127
)

// ringSize is script 18's ring buffer: room for a burst of records while
// the reader is not scheduled.
const ringSize = 1 << 20

// histSlots holds hist()'s buckets: negative, 0, then one per power of
// two up to 2^62, the highest bit of a positive int64.
const histSlots = 65

// Flags of BPF helpers.
const (
	userStack = 1 << 8 // BPF_F_USER_STACK
	anyFlag   = 0      // BPF_ANY
)

// floors builds the programs of each script, creating their maps.
var floors = [Scripts + 1]func(b *builder) ([]probe, error){
	1:  func(*builder) ([]probe, error) { return nil, nil },
	2:  func(*builder) ([]probe, error) { return empty("floor_02_empty", readEntry), nil },
	3:  func(*builder) ([]probe, error) { return empty("floor_03_empty", readReturn), nil },
	4:  func(*builder) ([]probe, error) { return empty("floor_04_empty", sysEnter), nil },
	5:  func(*builder) ([]probe, error) { return empty("floor_05_empty", sysExit), nil },
	6:  func(*builder) ([]probe, error) { return empty("floor_06_empty", libcEntry), nil },
	7:  func(*builder) ([]probe, error) { return empty("floor_07_empty", libcReturn), nil },
	8:  filter,
	9:  count,
	10: countPid,
	11: countComm,
	12: countPidComm,
	13: countKstack,
	14: countUstack,
	15: hist,
	16: timing,
	17: stacksHist,
	18: printf,
}

// empty is the program of `{ 1 }`: an expression statement with no
// effect.
func empty(name string, at point) []probe {
	return []probe{{name, at, asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}}}
}

// filter is `/arg2 > 0/ { 1 }`: the predicate is read and compared, and
// the body does nothing. arg2 is a u64, so > 0 means not zero.
func filter(b *builder) ([]probe, error) {
	arg2, err := b.arg2()
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.LoadMem(asm.R2, asm.R1, arg2, asm.DWord),
		asm.Mov.Imm(asm.R0, 0),
		asm.JEq.Imm(asm.R2, 0, "out"),
	)
	p.place("out")
	p.emit(asm.Return())
	return []probe{{"floor_08_filter", readEntry, p.insns}}, nil
}

// count is `@ = count()`: a per-CPU array of one counter.
func count(b *builder) ([]probe, error) {
	counts, err := b.newMap("counts", ebpf.PerCPUArray, 4, 8, 1)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(asm.StoreImm(asm.RFP, -4, 0, asm.Word))
	p.increment(counts, -4)
	return []probe{{"floor_09_count", readEntry, p.insns}}, nil
}

// countPid is `@[pid] = count()`, keyed by the u64 process id.
func countPid(b *builder) ([]probe, error) {
	counts, err := b.newMap("counts", ebpf.PerCPUHash, 8, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
	)
	p.count(counts, -8, -16)
	return []probe{{"floor_10_pid", readEntry, p.insns}}, nil
}

// countComm is `@[comm] = count()`, keyed by the 16 bytes of comm.
func countComm(b *builder) ([]probe, error) {
	counts, err := b.newMap("counts", ebpf.PerCPUHash, 16, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	var p prog
	p.comm(-16)
	p.count(counts, -16, -24)
	return []probe{{"floor_11_comm", readEntry, p.insns}}, nil
}

// countPidComm is `@[pid, comm] = count()`: the key is the u64 pid, then
// comm.
func countPidComm(b *builder) ([]probe, error) {
	counts, err := b.newMap("counts", ebpf.PerCPUHash, 24, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -24, asm.R0, asm.DWord),
	)
	p.comm(-16)
	p.count(counts, -24, -32)
	return []probe{{"floor_12_keys", readEntry, p.insns}}, nil
}

// countKstack is `@[kstack] = count()`, keyed by the stack's id; a failed
// walk's error counts under its negative id, as an id is all the
// program has.
func countKstack(b *builder) ([]probe, error) {
	stacks, err := b.stacks()
	if err != nil {
		return nil, err
	}
	counts, err := b.newMap("counts", ebpf.PerCPUHash, 4, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.LoadMapPtr(asm.R2, stacks.FD()),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnGetStackid.Call(),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
	)
	p.count(counts, -4, -16)
	return []probe{{"floor_13_kstack", readEntry, p.insns}}, nil
}

// countUstack is `@[ustack] = count()`. User addresses mean something
// only in their process, so the key is the stack id and the pid.
func countUstack(b *builder) ([]probe, error) {
	stacks, err := b.stacks()
	if err != nil {
		return nil, err
	}
	counts, err := b.newMap("counts", ebpf.PerCPUHash, 8, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, stacks.FD()),
		asm.Mov.Imm(asm.R3, userStack),
		asm.FnGetStackid.Call(),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
	)
	p.count(counts, -8, -16)
	return []probe{{"floor_14_ustack", readEntry, p.insns}}, nil
}

// hist is `@ = hist(arg2)`: one per-CPU array slot per bucket.
func hist(b *builder) ([]probe, error) {
	arg2, err := b.arg2()
	if err != nil {
		return nil, err
	}
	slots, err := b.newMap("hist", ebpf.PerCPUArray, 4, 8, histSlots)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(asm.LoadMem(asm.R2, asm.R1, arg2, asm.DWord))
	p.bucket(asm.R0, asm.R2, asm.R3, "b")
	p.emit(asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word))
	p.increment(slots, -4)
	return []probe{{"floor_15_hist", readEntry, p.insns}}, nil
}

// timing is script 16: the entry stores the time by thread id, the
// return puts the elapsed time in the hist and deletes the entry. The
// predicate's lookup and the body's are one.
func timing(b *builder) ([]probe, error) {
	start, err := b.newMap("start", ebpf.Hash, 4, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	slots, err := b.newMap("hist", ebpf.PerCPUArray, 4, 8, histSlots)
	if err != nil {
		return nil, err
	}
	var entry prog
	entry.emit(
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, -16, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, start.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -16),
		asm.Mov.Imm(asm.R4, anyFlag),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	)

	var ret prog
	ret.emit(
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, start.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R6, asm.R0, 0, asm.DWord),
		asm.JEq.Imm(asm.R6, 0, "out"),
		asm.FnKtimeGetNs.Call(),
		asm.Sub.Reg(asm.R0, asm.R6),
	)
	ret.bucket(asm.R1, asm.R0, asm.R2, "b")
	ret.emit(
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, slots.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "delete"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	)
	ret.place("delete")
	ret.emit(
		asm.LoadMapPtr(asm.R1, start.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapDeleteElem.Call(),
	)
	ret.place("out")
	ret.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return []probe{
		{"floor_16_start", readEntry, entry.insns},
		{"floor_16_hist", readReturn, ret.insns},
	}, nil
}

// stacksHist is `@[kstack, ustack] = hist(arg2)`: a keyed hist is one
// map whose key ends with the bucket, here {kstack id, ustack id, pid,
// bucket}, the pid because of the user stack.
func stacksHist(b *builder) ([]probe, error) {
	arg2, err := b.arg2()
	if err != nil {
		return nil, err
	}
	stacks, err := b.stacks()
	if err != nil {
		return nil, err
	}
	counts, err := b.newMap("counts", ebpf.PerCPUHash, 16, 8, mapEntries)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R1, arg2, asm.DWord),
	)
	p.bucket(asm.R0, asm.R2, asm.R3, "b")
	p.emit(
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, stacks.FD()),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnGetStackid.Call(),
		asm.StoreMem(asm.RFP, -16, asm.R0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, stacks.FD()),
		asm.Mov.Imm(asm.R3, userStack),
		asm.FnGetStackid.Call(),
		asm.StoreMem(asm.RFP, -12, asm.R0, asm.Word),
	)
	p.count(counts, -16, -24)
	return []probe{{"floor_17_stacks", readEntry, p.insns}}, nil
}

// record is what script 18 sends per event: the format's id, then arg2.
const recordSize = 16

// printf is `printf("%d bytes\n", arg2)`: the record goes out through
// the ring buffer, and a refused one counts as lost.
func printf(b *builder) ([]probe, error) {
	arg2, err := b.arg2()
	if err != nil {
		return nil, err
	}
	events, err := b.newMap("events", ebpf.RingBuf, 0, 0, ringSize)
	if err != nil {
		return nil, err
	}
	lost, err := b.newMap("lost", ebpf.PerCPUArray, 4, 8, 1)
	if err != nil {
		return nil, err
	}
	var p prog
	p.emit(
		asm.LoadMem(asm.R1, asm.R1, arg2, asm.DWord),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, formatBytes),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, events.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -16),
		asm.Mov.Imm(asm.R3, recordSize),
		// Waking a reader that keeps up costs about a microsecond per
		// record; the floor's reader polls instead.
		asm.Mov.Imm(asm.R4, bpfRBNoWakeup),
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.StoreImm(asm.RFP, -20, 0, asm.Word),
	)
	p.increment(lost, -20)
	return []probe{{"floor_18_printf", readEntry, p.insns}}, nil
}

// bpfRBNoWakeup is BPF_RB_NO_WAKEUP, a flag of bpf_ringbuf_output.
const bpfRBNoWakeup = 1

// prog collects the instructions of one program.
type prog struct {
	insns asm.Instructions
	label string // names the next instruction emitted
}

func (p *prog) emit(insns ...asm.Instruction) {
	for _, ins := range insns {
		if p.label != "" {
			ins = ins.WithSymbol(p.label)
			p.label = ""
		}
		p.insns = append(p.insns, ins)
	}
}

// place names the next instruction; an instruction has one name, so two
// labels in a row are a mistake of this package.
func (p *prog) place(label string) {
	if p.label != "" {
		panic(fmt.Sprintf("floor: labels %s and %s on one instruction", p.label, label))
	}
	p.label = label
}

// comm writes the 16 bytes of the current task's comm at the frame
// offset off. Older kernels, 6.1 among them, copy up to the NUL and
// leave the rest of the buffer as it was, so it is zeroed first: else
// stack garbage would split one comm into many keys.
func (p *prog) comm(off int16) {
	p.emit(
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, off, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, off+8, asm.R1, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(off)),
		asm.Mov.Imm(asm.R2, 16),
		asm.FnGetCurrentComm.Call(),
	)
}

// increment adds one to the slot of a per-CPU array whose index is at
// frame offset key, and ends the program. The lookup of a valid index
// cannot miss, but the verifier wants the check.
func (p *prog) increment(m *ebpf.Map, key int16) {
	p.emit(
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
	)
	p.place("out")
	p.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
}

// count is count() into a per-CPU hash, with the key at frame offset key:
// it increments the value found, or inserts 1 through the frame offset
// val, and ends the program. Per-CPU values need no atomic add.
func (p *prog) count(m *ebpf.Map, key, val int16) {
	p.emit(
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "insert"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Ja.Label("out"),
	)
	p.place("insert")
	p.emit(
		// A 64-bit immediate store does not encode; go through a register.
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreMem(asm.RFP, val, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(val)),
		asm.Mov.Imm(asm.R4, anyFlag),
		asm.FnMapUpdateElem.Call(),
	)
	p.place("out")
	p.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
}

// bucket puts in dst the hist() bucket of the signed value in v, as
// bpftrace counts them: 0 for a negative value, 1 for 0, else
// 2+floor(log2(v)), found by a binary search on the highest bit set. It
// clobbers v and tmp, and names the instruction after it, so the caller
// must emit one; labels start with prefix.
func (p *prog) bucket(dst, v, tmp asm.Register, prefix string) {
	end := prefix + "_end"
	p.emit(
		asm.Mov.Imm(dst, 0),
		asm.JSLT.Imm(v, 0, end),
		asm.Mov.Imm(dst, 1),
		asm.JEq.Imm(v, 0, end),
		asm.Mov.Imm(dst, 2),
	)
	for _, shift := range []int32{32, 16, 8, 4, 2, 1} {
		next := fmt.Sprintf("%s_%d", prefix, shift)
		if shift == 1 {
			next = end
		}
		p.emit(
			asm.Mov.Reg(tmp, v),
			asm.RSh.Imm(tmp, shift),
			asm.JEq.Imm(tmp, 0, next),
			asm.Mov.Reg(v, tmp),
			asm.Add.Imm(dst, shift),
		)
		p.place(next)
	}
}

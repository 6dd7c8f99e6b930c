package codegen

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// The tables of names strerror() and syscall_name() read.
const (
	mapErrnos       = "errnos"
	mapSyscallNames = "syscall_names"
)

// nameOf copies into dst the text of the number in the call's argument,
// as strerror() (which takes -errno too) and syscall_name() give it: an
// entry of a table of NameSize texts by number, whose last entry, the
// unknown text, any number out of range reads. The number is an int32,
// as in bpftrace.
func (g *gen) nameOf(call *ast.Call, dst int) {
	table, names := mapErrnos, sema.ErrnoNames()
	strerror := g.prog.Funcs[call] == sema.FStrerror
	if !strerror {
		table, names = mapSyscallNames, sema.SyscallNames()
	}
	if _, ok := g.out.Spec.Maps[table]; !ok {
		g.out.Spec.Maps[table] = nameTable(table, names)
	}
	g.scalar(call.Args[0])
	g.emit(asm.LSh.Imm(asm.R0, 32), asm.ArSh.Imm(asm.R0, 32))
	if strerror {
		positive := g.newLabel()
		g.emit(asm.JSGE.Imm(asm.R0, 0, positive), asm.Neg.Imm(asm.R0, 0))
		g.place(positive)
	}
	known := g.newLabel()
	n := int32(len(names.Texts))
	g.emit(asm.JLT.Imm(asm.R0, n, known), asm.Mov.Imm(asm.R0, n))
	g.place(known)
	missing, done := g.newLabel(), g.newLabel()
	g.emit(
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(table),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, missing),
	)
	g.copyMem(regScratch, dst, asm.R0, 0, sema.NameSize)
	g.emit(asm.Ja.Label(done))
	g.place(missing)
	g.zeroMem(regScratch, dst, sema.NameSize)
	g.place(done)
}

// nameTable is the array map of names' texts, the unknown text standing
// for any number without one and, last, for those out of range.
func nameTable(name string, names sema.Names) *ebpf.MapSpec {
	texts := append(names.Texts, names.Unknown)
	spec := &ebpf.MapSpec{Name: name, Type: ebpf.Array, KeySize: 4, ValueSize: sema.NameSize,
		MaxEntries: uint32(len(texts))}
	for i, s := range texts {
		if s == "" {
			s = names.Unknown
		}
		v := make([]byte, sema.NameSize)
		copy(v[:sema.NameSize-1], s)
		spec.Contents = append(spec.Contents, ebpf.MapKV{Key: uint32(i), Value: v})
	}
	return spec
}

package fakekernel

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"

	"gtrace/kernel"
	"gtrace/probe"
	"gtrace/symbol"
)

// Expand resolves an attach point without the kernel's lists:
// tracepoints and raw tracepoints are taken as written, wildcards and
// all, and a usdt probe is one site of the binary as written, whatever
// the binary holds (see USDTArgs). Anything else goes to probe.Parse,
// which needs no kernel for a kprobe or fentry probe without wildcards,
// and reads the binary of a uprobe.
func Expand(text string) ([]probe.Probe, error) {
	kind, rest, _ := strings.Cut(text, ":")
	switch kind {
	case "tracepoint", "t":
		cat, ev, _ := strings.Cut(rest, ":")
		return []probe.Probe{{Kind: probe.Tracepoint, Name: "tracepoint:" + rest, Target: cat, Event: ev}}, nil
	case "rawtracepoint", "rt":
		ev := rest[strings.LastIndex(rest, ":")+1:]
		return []probe.Probe{{Kind: probe.RawTracepoint, Name: "rawtracepoint:" + ev, Event: ev}}, nil
	case "usdt", "U":
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("the fake kernel's usdt probes have the form usdt:binary:provider:name, not %s", text)
		}
		args, err := symbol.ParseUSDTArgs(USDTArgs)
		if err != nil {
			return nil, err
		}
		site := &symbol.USDT{Provider: parts[1], Name: parts[2], Location: 0x1000, LocationOffset: 0x1000,
			Args: USDTArgs, Arguments: args}
		return []probe.Probe{{Kind: probe.Usdt, Name: "usdt:" + rest, Target: parts[0], Event: parts[2], USDT: site}}, nil
	}
	return probe.Parse(text)
}

// USDTArgs is the argument spec of every usdt probe Expand makes: a
// signed int in a register, a long in memory and a constant.
const USDTArgs = "-4@%edi 8@-16(%rbp) 4@$5"

// Format gives a tracepoint's format: sys_exit_read's fields for an
// event named sys_exit_*, sys_enter_read's and more for any other.
func Format(category, event string) (*kernel.Format, error) {
	nr := kernel.Field{Name: "__syscall_nr", CType: "int", Offset: 8, Size: 4, Signed: true}
	if strings.HasPrefix(event, "sys_exit_") {
		return &kernel.Format{Fields: []kernel.Field{nr,
			{Name: "ret", CType: "long", Offset: 16, Size: 8, Signed: true}}}, nil
	}
	return &kernel.Format{Fields: []kernel.Field{nr,
		{Name: "fd", CType: "unsigned int", Offset: 16, Size: 8},
		{Name: "buf", CType: "char *", Offset: 24, Size: 8},
		{Name: "count", CType: "size_t", Offset: 32, Size: 8},
		{Name: "comm", CType: "char[16]", Offset: 40, Size: 16, ArrayLen: 16},
		{Name: "filename", CType: "char[]", Offset: 56, Size: 4, DataLoc: true},
		{Name: "p", CType: "struct pair *", Offset: 64, Size: 8},
	}}, nil
}

// kernelTypes are the fake kernel's types, made once, as kernel.KernelType
// decodes vmlinux's BTF once: every lookup of a name gives the same type.
var kernelTypes = sync.OnceValue(types)

// types builds the fake kernel's types, by C name.
func types() map[string]btf.Type {
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	i64 := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	inner := &btf.Struct{Name: "inner", Size: 16, Members: []btf.Member{
		{Name: "x", Type: i64}, {Name: "y", Type: i64, Offset: 64}}}
	pair := &btf.Struct{Name: "pair", Size: 40}
	anon := &btf.Union{Size: 8, Members: []btf.Member{
		{Name: "b", Type: i64}, {Name: "c", Type: &btf.Pointer{Target: pair}}}}
	pair.Members = []btf.Member{{Name: "a", Type: i32}, {Type: anon, Offset: 64},
		{Name: "d", Type: i32, Offset: 128, BitfieldSize: 3},
		{Name: "in", Type: &btf.Typedef{Name: "inner_t", Type: inner}, Offset: 192}}
	path := &btf.Struct{Name: "path", Size: 16, Members: []btf.Member{
		{Name: "mnt", Type: &btf.Pointer{Target: &btf.Void{}}}, {Name: "dentry", Type: &btf.Pointer{Target: &btf.Void{}}, Offset: 64}}}
	file := &btf.Struct{Name: "file", Size: 32, Members: []btf.Member{
		{Name: "f_flags", Type: u32},
		{Name: "f_pos", Type: &btf.Typedef{Name: "loff_t", Type: &btf.Int{Name: "long long", Size: 8, Encoding: btf.Signed}}, Offset: 64},
		{Name: "f_path", Type: path, Offset: 128}}}
	kind := &btf.Enum{Name: "pair_kind", Size: 4, Values: []btf.EnumValue{{Name: "PAIR_A", Value: 1}, {Name: "PAIR_B", Value: 2}}}
	// A task with what ppid, pcomm, leader_tid and leader_comm read:
	// its parent, thread group leader, id and name.
	task := &btf.Struct{Name: "task_struct", Size: 40}
	task.Members = []btf.Member{{Name: "pid", Type: &btf.Typedef{Name: "pid_t", Type: i32}},
		{Name: "real_parent", Type: &btf.Pointer{Target: task}, Offset: 64},
		{Name: "comm", Type: &btf.Array{Type: &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}, Nelems: 16}, Offset: 128},
		{Name: "group_leader", Type: &btf.Pointer{Target: task}, Offset: 256}}
	m := map[string]btf.Type{"struct pair": pair, "struct inner": inner, "struct file": file, "struct path": path, "enum pair_kind": kind,
		"struct task_struct": task,
		"size_t":             &btf.Typedef{Name: "size_t", Type: &btf.Int{Name: "unsigned long", Size: 8}}}
	addNetTypes(m)
	return m
}

// KernelType finds a struct, union or enum of the fake kernel by its C
// name, such as "struct pair", or its one typedef, size_t.
func KernelType(name string) (btf.Type, error) {
	if t, ok := kernelTypes()[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%s is not in the kernel's BTF", name)
}

// EnumValue finds a value of the fake kernel's enums: PAIR_A or PAIR_B.
func EnumValue(name string) (int64, bool) {
	for _, v := range kernelTypes()["enum pair_kind"].(*btf.Enum).Values {
		if v.Name == name {
			return int64(v.Value), true
		}
	}
	return 0, false
}

// Func finds a function of the fake kernel for fentry and fexit:
// vfs_read, vfs_write or tcp_v4_connect; or a raw tracepoint's, for its
// args.
func Func(name string) (*btf.Func, error) {
	if name == "tcp_v4_connect" {
		return tcpConnect(), nil
	}
	if fn, ok := rawTracepointFunc(name); ok {
		return fn, nil
	}
	file, _ := KernelType("struct file")
	if name == "security_file_open" { // one that may call bpf_d_path
		proto := &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
			Params: []btf.FuncParam{{Name: "file", Type: &btf.Pointer{Target: file}}}}
		return &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc}, nil
	}
	if name == "bpf_task_from_pid" { // the kfunc comm(pid) calls
		task, _ := KernelType("struct task_struct")
		proto := &btf.FuncProto{Return: &btf.Pointer{Target: task},
			Params: []btf.FuncParam{{Name: "pid", Type: &btf.Int{Name: "s32", Size: 4, Encoding: btf.Signed}}}}
		return &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc}, nil
	}
	if name != "vfs_read" && name != "vfs_write" {
		return nil, fmt.Errorf("function %s is not in the kernel's BTF", name)
	}
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	proto := &btf.FuncProto{
		Return: &btf.Typedef{Name: "ssize_t", Type: long},
		Params: []btf.FuncParam{
			{Name: "file", Type: &btf.Pointer{Target: file}},
			{Name: "buf", Type: &btf.Pointer{Target: char}},
			{Name: "count", Type: &btf.Typedef{Name: "size_t", Type: &btf.Int{Name: "unsigned long", Size: 8}}},
			{Name: "pos", Type: &btf.Pointer{Target: file.(*btf.Struct).Members[1].Type}},
		}}
	return &btf.Func{Name: name, Type: proto, Linkage: btf.GlobalFunc}, nil
}

// JiffiesAddr is the address Kaddr gives jiffies.
const JiffiesAddr = 0xffffffff82000000

// Kaddr finds a kernel symbol's address: the fake kallsyms has jiffies
// and the per-CPU variables of KernelVar, all at one address.
func Kaddr(name string) (uint64, bool) {
	_, err := KernelVar(name)
	return JiffiesAddr, name == "jiffies" || err == nil
}

// HasKprobes says that the fake kernel has kprobes.
func HasKprobes() bool { return true }

// NotTraceable is the one function kprobes can not trace.
const NotTraceable = "notrace_fn"

// Traceable says why a kprobe on fn would not attach, in the words sema
// uses for the real kernel's lists: only NotTraceable is not traceable.
func Traceable(fn string) error {
	if fn == NotTraceable {
		return fmt.Errorf(`%s is not traceable (either non-existing, inlined, or marked as "notrace"); attaching to it will likely fail`, fn)
	}
	return nil
}

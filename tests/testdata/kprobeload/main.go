// Command kprobeload loads a kprobe program on vfs_read, described by
// BTF function information as a compiler describes its programs, prints
// the program's id and holds it until SIGINT or SIGTERM: a program that
// another process than gtrace loaded, for gtrace prof to profile.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kprobeload:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := &btf.Pointer{Target: &btf.Void{}}
	fn := &btf.Func{Name: "count_read", Linkage: btf.GlobalFunc, Type: &btf.FuncProto{
		Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: "ctx", Type: ctx}},
	}}
	// Some work for each run to take time: the caller's pid and the
	// time, kept on the stack.
	insns := asm.Instructions{
		btf.WithFuncMetadata(asm.FnGetCurrentPidTgid.Call(), fn),
		asm.StoreMem(asm.R10, -8, asm.R0, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R10, -16, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kprobeload", Type: ebpf.Kprobe,
		Instructions: insns, License: "GPL"})
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	defer prog.Close()
	l, err := link.Kprobe("vfs_read", prog, nil)
	if err != nil {
		return fmt.Errorf("attach to vfs_read: %w", err)
	}
	defer l.Close()
	info, err := prog.Info()
	if err != nil {
		return fmt.Errorf("program info: %w", err)
	}
	id, _ := info.ID()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("id %d\n", id)
	<-sigs
	return nil
}

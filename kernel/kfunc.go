package kernel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// KfuncAllowed reports whether programs of type t may call the kernel
// function name, a kfunc: the kernel checks a call before verifying the
// rest, and says "calling kernel function NAME is not allowed" when the
// program type may not. As bpftrace, any other refusal counts as
// allowed, and a kernel without BTF allows nothing.
func KfuncAllowed(name string, t ebpf.ProgramType) bool {
	call, err := KfuncCall(name)
	if err != nil {
		return false
	}
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Type:         t,
		License:      "GPL",
		Instructions: asm.Instructions{call, asm.Return()},
	}, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelBranch})
	if err == nil {
		prog.Close()
		return true
	}
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return true
	}
	return !strings.Contains(fmt.Sprint(ve.Log), fmt.Sprintf("calling kernel function %s is not allowed", name))
}

// KfuncCall is the instruction that calls the kfunc name of vmlinux: a
// call that holds the function's BTF type id.
func KfuncCall(name string) (asm.Instruction, error) {
	fn, err := KernelFunc(name)
	if err != nil {
		return asm.Instruction{}, err
	}
	spec, _ := vmlinux()
	id, err := spec.TypeID(fn)
	if err != nil {
		return asm.Instruction{}, fmt.Errorf("kfunc %s: %w", name, err)
	}
	return asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoKfuncCall, Constant: int64(id)}, nil
}

package compiler_test

import (
	"gtrace/codegen"
	"gtrace/internal/fakekernel"
	"gtrace/sema"
)

// fakeKernel checks scripts against the fake kernel, which needs no root.
var fakeKernel = sema.Options{Expand: fakekernel.Expand, Format: fakekernel.Format,
	KernelType: fakekernel.KernelType, EnumValue: fakekernel.EnumValue, Func: fakekernel.Func,
	Kaddr: fakekernel.Kaddr, KernelVar: fakekernel.KernelVar, HasKprobes: fakekernel.HasKprobes, Traceable: fakekernel.Traceable}

// fakeCodegen generates code for two CPUs, whatever this machine has.
var fakeCodegen = codegen.Options{NumCPU: 2}

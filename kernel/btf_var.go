package kernel

import (
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// KernelVar finds the BTF type id of a kernel variable, such as a
// per-CPU variable for percpu_kaddr(), in vmlinux's BTF.
func KernelVar(name string) (btf.TypeID, error) {
	spec, err := vmlinux()
	if err != nil {
		return 0, fmt.Errorf("kernel BTF: %w", err)
	}
	var v *btf.Var
	if err := spec.TypeByName(name, &v); err != nil {
		return 0, fmt.Errorf("variable %s is not in the kernel's BTF: %w", name, err)
	}
	return spec.TypeID(v)
}

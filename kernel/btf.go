package kernel

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// vmlinux is the running kernel's BTF, loaded once. The index of enum
// constants is built meanwhile, on another CPU: a script that reads the
// kernel's types is likely to name one, and building it after would add
// its few milliseconds to gtrace's start.
var vmlinux = sync.OnceValues(func() (*btf.Spec, error) {
	go kernelEnums()
	return btf.LoadKernelSpec()
})

// KernelType finds a named struct, union or enum, written as C writes it
// ("struct task_struct"), or a typedef or base type ("size_t", "char"),
// in the running kernel's BTF.
func KernelType(name string) (btf.Type, error) {
	spec, err := vmlinux()
	if err != nil {
		return nil, fmt.Errorf("kernel BTF: %w", err)
	}
	kind, tag, ok := strings.Cut(name, " ")
	if !ok {
		var td *btf.Typedef
		if err := spec.TypeByName(name, &td); err == nil {
			return td, nil
		}
		var i *btf.Int
		err = spec.TypeByName(name, &i)
		return i, notFound(name, err)
	}
	switch kind {
	case "struct":
		var s *btf.Struct
		err = spec.TypeByName(tag, &s)
		return s, notFound(name, err)
	case "union":
		var u *btf.Union
		err = spec.TypeByName(tag, &u)
		return u, notFound(name, err)
	case "enum":
		var e *btf.Enum
		err = spec.TypeByName(tag, &e)
		return e, notFound(name, err)
	}
	return nil, fmt.Errorf("unknown type %s", name)
}

func notFound(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%s is not in the kernel's BTF: %w", name, err)
	}
	return nil
}

// KernelFunc finds a kernel function's BTF description, for the typed
// arguments of fentry and fexit probes.
func KernelFunc(name string) (*btf.Func, error) {
	spec, err := vmlinux()
	if err != nil {
		return nil, fmt.Errorf("kernel BTF: %w", err)
	}
	var fn *btf.Func
	if err := spec.TypeByName(name, &fn); err != nil {
		return nil, fmt.Errorf("function %s is not in the kernel's BTF: %w", name, err)
	}
	return fn, nil
}

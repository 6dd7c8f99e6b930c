package kernel

import "github.com/cilium/ebpf/btf"

// BTFSpecs returns the BTF of vmlinux, named "vmlinux", and of every
// loaded module, named after it, for scans over all the kernel's types.
func BTFSpecs() (names []string, specs []*btf.Spec, err error) {
	return kernelSpecs()
}

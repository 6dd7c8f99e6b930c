package flow

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"gtrace/kernel"
)

// ChooseProbes picks how to probe kernel functions here: kprobes (one
// program for many functions where the kernel has kprobe.multi, else one
// each), else fentry. It says which kernel features are missing when
// there is no way.
//
// Kprobes come first even without kprobe.multi: on 6.1 under emulation,
// a kprobe attaches in about 25 ms, while each fentry and fexit program
// is loaded and verified on its own, for its function's BTF, which took
// minutes for a glob of 70 functions; and a function the kernel will not
// take (a return value of a struct, a local symbol such as
// vfs_kern_mount.part.0 with no BTF) fails the load, and the whole flow,
// where a refused kprobe is only left out with a warning.
func ChooseProbes() (Probes, error) {
	if kernel.HasKprobes() {
		return Kprobe, nil
	}
	fentryErr := loadFentry()
	if fentryErr == nil {
		return Fentry, nil
	}
	return "", fmt.Errorf("gtrace flow needs kprobes or fentry to follow kernel functions, and this kernel has neither: "+
		"no kprobes (no kprobe PMU and no kprobe_events in tracefs: CONFIG_KPROBES is off), "+
		"and an fentry program does not load (%w)", fentryErr)
}

// loadFentry loads an fentry program on vfs_read that does nothing, to
// see whether the kernel takes fentry programs at all.
func loadFentry() error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.Tracing,
		AttachType:   ebpf.AttachTraceFEntry,
		AttachTo:     "vfs_read",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
		License:      "GPL",
	})
	if errors.Is(err, unix.EPERM) {
		// Not cilium/ebpf's guess at a low memlock limit, which is not
		// why a kernel refuses fentry.
		return fmt.Errorf("load fentry:vfs_read: %w", unix.EPERM)
	}
	if err != nil {
		return fmt.Errorf("load fentry:vfs_read: %w", err)
	}
	return prog.Close()
}

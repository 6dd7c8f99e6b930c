package flow

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"gtrace/kernel"
)

// ChooseProbes picks how to probe kernel functions here: kprobes where
// one program attaches to many functions at once (kprobe.multi), else
// fentry, else kprobes one by one. It says which kernel features are
// missing when there is no way.
func ChooseProbes() (Probes, error) {
	if kernel.HasKprobeMulti() {
		return Kprobe, nil
	}
	fentryErr := loadFentry()
	if fentryErr == nil {
		return Fentry, nil
	}
	if kernel.HasKprobes() {
		return Kprobe, nil
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

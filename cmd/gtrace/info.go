package main

import (
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"gtrace/runtime"
)

// info prints what --info prints in bpftrace: the system, the build, and
// which kernel features gtrace can use, in bpftrace's sections.
func info(stdout, stderr io.Writer) int {
	if err := runtime.CheckPrivileges(); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		fmt.Fprintf(stderr, "ERROR: uname: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "System\n  OS: %s %s %s\n  Arch: %s\n\n",
		unix.ByteSliceToString(uts.Sysname[:]), unix.ByteSliceToString(uts.Release[:]),
		unix.ByteSliceToString(uts.Version[:]), unix.ByteSliceToString(uts.Machine[:]))
	fmt.Fprintf(stdout, "Build\n  version: gtrace %s, bpftrace %s language\n  go: %s\n\n",
		version, bpftraceVersion, goruntime.Version())

	kprobe := func(h asm.BuiltinFunc) bool { return features.HaveProgramHelper(ebpf.Kprobe, h) == nil }
	spec, btfErr := btf.LoadKernelSpec()
	tabulate(stdout, "Kernel helpers", [][2]string{
		{"dpath", yesNo(features.HaveProgramHelper(ebpf.Tracing, asm.FnDPath) == nil)},
		{"get_tai_ns", yesNo(kprobe(asm.FnKtimeGetTaiNs))},
		{"get_func_ip", yesNo(kprobe(asm.FnGetFuncIp))},
		{"lookup_percpu_elem", yesNo(kprobe(asm.FnMapLookupPercpuElem))},
		{"loop", yesNo(kprobe(asm.FnLoop))},
	})
	tabulate(stdout, "Kernel features", [][2]string{
		{"Instruction limit", instructionLimit()},
		{"btf", yesNo(btfErr == nil)},
		{"module btf", yesNo(hasModuleBTF())},
	})
	tabulate(stdout, "Probe types", [][2]string{
		{"kprobe_multi", yesNo(features.HaveBPFLinkKprobeMulti() == nil)},
		{"uprobe_multi", yesNo(features.HaveBPFLinkUprobeMulti() == nil)},
		{"kprobe_session", yesNo(features.HaveBPFLinkKprobeSession() == nil)},
		{"iter", yesNo(btfErr == nil && hasIterTask(spec))},
	})
	return 0
}

// tabulate prints a section of name: value rows, the values aligned.
func tabulate(w io.Writer, title string, rows [][2]string) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	fmt.Fprintln(w, title)
	for _, r := range rows {
		fmt.Fprintf(w, "  %s:%s %s\n", r[0], strings.Repeat(" ", width-len(r[0])), r[1])
	}
	fmt.Fprintln(w)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// instructionLimit is the most instructions the verifier takes in one
// program: a million since Linux 5.2, 4096 before.
func instructionLimit() string {
	if features.HaveLargeInstructions() == nil {
		return "1000000"
	}
	return "4096"
}

// hasModuleBTF reports whether the kernel gives BTF of its modules:
// files beside vmlinux in /sys/kernel/btf.
func hasModuleBTF() bool {
	entries, err := os.ReadDir("/sys/kernel/btf")
	return err == nil && slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() != "vmlinux" })
}

// hasIterTask reports whether the kernel describes the task iterator.
func hasIterTask(spec *btf.Spec) bool {
	var s *btf.Struct
	return spec.TypeByName("bpf_iter__task", &s) == nil
}

package main

import (
	"os"
	"regexp"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
)

// featureChecks decides each REQUIRES_FEATURE name from this machine,
// where bpftrace's engine reads it from "bpftrace --info". Kernel features
// are probed; features of bpftrace's build (DWARF, library path
// resolution, unwinding, symbolization) are the tracer's own job and count
// as present; AOT never runs.
var featureChecks = map[string]func() bool{
	"loop":              func() bool { return features.HaveBoundedLoops() == nil },
	"probe_read_kernel": helper(ebpf.TracePoint, asm.FnProbeReadKernel),
	"btf":               fileExists("/sys/kernel/btf/vmlinux"),
	"fentry":            haveFentry,
	"dpath":             func() bool { return haveFentry() && helper(ebpf.Tracing, asm.FnDPath)() },
	"signal":            helper(ebpf.TracePoint, asm.FnSendSignal),
	// Iterators are tracing programs, which some kernels load although
	// they refuse fentry programs.
	"iter":               haveIter,
	"libpath_resolv":     present,
	"dwarf":              present,
	"dwunwind":           func() bool { return runtime.GOARCH == "amd64" }, // dw_ustack is x86-64's only
	"blazesym":           present,
	"kprobe_multi":       func() bool { return features.HaveBPFLinkKprobeMulti() == nil },
	"kprobe_session":     func() bool { return features.HaveBPFLinkKprobeSession() == nil },
	"uprobe_multi":       func() bool { return features.HaveBPFLinkUprobeMulti() == nil },
	"aot":                func() bool { return false },
	"skboutput":          haveFentry,
	"get_tai_ns":         helper(ebpf.TracePoint, asm.FnKtimeGetTaiNs),
	"get_func_ip":        helper(ebpf.Kprobe, asm.FnGetFuncIp),
	"jiffies64":          helper(ebpf.TracePoint, asm.FnJiffies64),
	"lookup_percpu_elem": helper(ebpf.TracePoint, asm.FnMapLookupPercpuElem),
}

// featureCache holds decided features: each probe loads programs.
var featureCache = map[string]bool{}

// present is a feature of bpftrace's build rather than of the kernel.
func present() bool { return true }

// haveFeature decides one feature once.
func haveFeature(name string) bool {
	if v, ok := featureCache[name]; ok {
		return v
	}
	v := featureChecks[name]()
	featureCache[name] = v
	return v
}

func helper(pt ebpf.ProgramType, fn asm.BuiltinFunc) func() bool {
	return func() bool { return features.HaveProgramHelper(pt, fn) == nil }
}

func fileExists(path string) func() bool {
	return func() bool {
		_, err := os.Stat(path)
		return err == nil
	}
}

// haveFentry loads an fentry program on a kernel function, as bpftrace's
// own probe does; a kernel that refuses tracing programs fails here.
func haveFentry() bool {
	if v, ok := featureCache["fentry"]; ok {
		return v
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:       ebpf.Tracing,
		AttachType: ebpf.AttachTraceFEntry,
		AttachTo:   "bpf_fentry_test1",
		License:    "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err == nil {
		prog.Close()
	}
	featureCache["fentry"] = err == nil
	return err == nil
}

// haveIter loads the smallest task iterator program.
func haveIter() bool {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.Tracing,
		AttachType:   ebpf.AttachTraceIter,
		AttachTo:     "task",
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err == nil {
		prog.Close()
	}
	return err == nil
}

// providerNeeds are the probe providers that need a kernel feature
// bpftrace's tests take for granted, found by their spelling in a case's
// program or command, each with the feature's name and check.
var providerNeeds = []struct {
	re      *regexp.Regexp
	feature string
	have    func() bool
}{
	{regexp.MustCompile(`(^|[\s,'"{};])(kprobe|kretprobe|k|kr)(\.\w+)?:[A-Za-z_*"]`), "kprobes", haveKprobes},
	{regexp.MustCompile(`(^|[\s,'"{};])(fentry|fexit|kfunc|kretfunc|f|fr)(\.\w+)?:[A-Za-z_*"]`), "fentry", haveFentry},
}

// missingProvider names the kernel feature the probes of text need and
// this machine lacks, or "".
func missingProvider(text string) string {
	for _, p := range providerNeeds {
		if p.re.MatchString(text) && !p.have() {
			return p.feature
		}
	}
	return ""
}

// haveKprobes tells whether the kernel can make kprobes.
func haveKprobes() bool {
	return fileExists("/sys/kernel/tracing/kprobe_events")() || fileExists("/sys/kernel/debug/tracing/kprobe_events")()
}

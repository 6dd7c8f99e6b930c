package codegen_test

import (
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/probe"
)

// probeKinds has an attach point of every probe kind that the fake
// kernel resolves, and the program that runs it.
var probeKinds = []struct {
	kind       probe.Kind
	name       string
	attach     string
	progType   ebpf.ProgramType
	attachType ebpf.AttachType
}{
	{probe.Begin, "begin", "BEGIN", ebpf.RawTracepoint, 0},
	{probe.End, "end", "END", ebpf.RawTracepoint, 0},
	{probe.Tracepoint, "tracepoint", "tracepoint:syscalls:sys_enter_read", ebpf.TracePoint, 0},
	{probe.RawTracepoint, "rawtracepoint", "rawtracepoint:sched_switch", ebpf.RawTracepoint, 0},
	{probe.Interval, "interval", "interval:ms:100", ebpf.PerfEvent, 0},
	{probe.Profile, "profile", "profile:hz:99", ebpf.PerfEvent, 0},
	{probe.Software, "software", "software:faults:10", ebpf.PerfEvent, 0},
	{probe.Hardware, "hardware", "hardware:cycles:1000", ebpf.PerfEvent, 0},
	{probe.Kprobe, "kprobe", "kprobe:vfs_read", ebpf.Kprobe, 0},
	{probe.Kretprobe, "kretprobe", "kretprobe:vfs_read", ebpf.Kprobe, 0},
	{probe.Fentry, "fentry", "fentry:vfs_read", ebpf.Tracing, ebpf.AttachTraceFEntry},
	{probe.Fexit, "fexit", "fexit:vfs_read", ebpf.Tracing, ebpf.AttachTraceFExit},
	{probe.Uprobe, "uprobe", "uprobe:libc:malloc", ebpf.Kprobe, 0},
	{probe.Uretprobe, "uretprobe", "uretprobe:libc:malloc", ebpf.Kprobe, 0},
	{probe.Usdt, "usdt", "usdt:prog:gtest:probe", ebpf.Kprobe, 0},
	{probe.Self, "self", "self:signal:SIGUSR1", ebpf.RawTracepoint, 0},
	{probe.Watchpoint, "watchpoint", "watchpoint:0x10000000:8:w", ebpf.PerfEvent, 0},
	{probe.Bench, "bench", "bench:a", ebpf.XDP, 0},
	{probe.Test, "test", "test:a", ebpf.XDP, 0},
	{probe.Iter, "iter", "iter:task", ebpf.Tracing, ebpf.AttachTraceIter},
}

// kindNames names the probe kinds, for messages.
var kindNames = func() map[probe.Kind]string {
	names := map[probe.Kind]string{}
	for _, pk := range probeKinds {
		names[pk.kind] = pk.name
	}
	return names
}()

// probeSample is the script compiled for each probe kind.
func probeSample(attach string) string {
	return attach + ` { @[probe] = count(); @last = nsecs; }`
}

// TestProbeKinds compiles a probe of every kind, and checks the program
// type and attach type of its program.
func TestProbeKinds(t *testing.T) {
	for _, k := range probe.Kinds() {
		if _, ok := kindNames[k]; !ok {
			t.Errorf("probe kind %v has no sample attach point", k)
		}
	}
	for _, pk := range probeKinds {
		t.Run(pk.name, func(t *testing.T) {
			out := compile(t, probeSample(pk.attach), nil)
			if len(out.Progs) != 1 {
				t.Fatalf("%d programs, want 1", len(out.Progs))
			}
			p := out.Progs[0]
			if p.Prog.Probe.Kind != pk.kind {
				t.Errorf("probe kind %d, want %d", p.Prog.Probe.Kind, pk.kind)
			}
			spec := out.Spec.Programs[p.Name]
			if spec.Type != pk.progType || spec.AttachType != pk.attachType {
				t.Errorf("program type %v, attach type %v; want %v, %v", spec.Type, spec.AttachType, pk.progType, pk.attachType)
			}
			if want := p.Prog.Probe.Func(); pk.attachType != 0 && spec.AttachTo != want {
				t.Errorf("program attaches to %q, want %s", spec.AttachTo, want)
			}
		})
	}
}

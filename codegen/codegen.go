package codegen

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"gtrace/lang/diag"
	"gtrace/lang/token"
	"gtrace/sema"
)

// Output is a compiled script: the collection to load and what user space
// needs to make sense of what it sends.
type Output struct {
	Spec   *ebpf.CollectionSpec
	Progs  []*Program
	Events []*Event
	// Maps holds each script map's layout, by script name.
	Maps map[string]*MapLayout
	// stackMaps are the stack maps the programs record stacks in.
	stackMaps map[string]*ebpf.MapSpec
	// MaxStrlen is max_strlen, which also bounds strftime()'s text.
	MaxStrlen int
	// The config settings user space follows.
	sema.Settings
	// Slots places each fused syscall program, by program name, in the
	// program array its dispatcher tail-calls through.
	Slots map[string]int
	// Dispatchers are the raw_syscalls programs that run the fused
	// ones; they are attached, the fused programs are not.
	Dispatchers []*Program
}

// Program is one generated BPF program.
type Program struct {
	Name string // its name in Spec.Programs
	Prog *sema.Prog
	// Names is the map from which a multi-kprobe reads its functions'
	// probe and func names, by cookie: the runtime fills it. Each
	// entry holds the probe name, then the func name, in NameSize bytes
	// each.
	Names    string
	NameSize int
	// StopSlot is the program's slot in the stopped counters: how many
	// times it ran after tracing stopped, which its run count includes.
	StopSlot int
}

// Options carries values fixed at compile time.
type Options struct {
	Cpid uint32 // the pid of the -c child
	// Pid, when set, makes every probe but BEGIN and END ignore other
	// processes (-p).
	Pid uint32
	// Cgroup and PidNS, when set, make every probe but BEGIN and END
	// ignore the tasks of other containers (--cgroup, --pod, --pidns).
	Cgroup *CgroupFilter
	PidNS  *PidNSFilter
	// NumCPU is the number of possible CPUs, over which loops merge
	// per-CPU values; the running machine's when 0.
	NumCPU int
	// File is the script the program was parsed from, whose statements'
	// text becomes the programs' BTF line info; without it the line
	// info is empty and the verifier's log quotes nothing.
	File *token.File
	// HelperErrors (-k) sends a warning when a probe read fails or a
	// map read finds no value.
	HelperErrors bool
}

// scratchSize bounds each program's per-CPU scratch area; the kernel
// refuses per-CPU values above 32 KiB.
const scratchSize = 32 << 10

// ringSize is the ring buffer's size in bytes.
const ringSize = 1 << 20

// Compile generates the programs and maps of a checked script.
func Compile(info *sema.Info, opts *Options) (*Output, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	opts = &o
	if opts.NumCPU == 0 {
		n, err := ebpf.PossibleCPU()
		if err != nil {
			return nil, fmt.Errorf("count possible CPUs: %w", err)
		}
		opts.NumCPU = n
	}
	out := &Output{Spec: &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}},
		Maps: map[string]*MapLayout{}, MaxStrlen: info.Config.MaxStrlen, Slots: map[string]int{},
		Settings: info.Config.Settings}
	arrays := arrayMaps(info)
	for i, name := range info.MapNames {
		mi := info.Maps[name]
		l := newMapLayout(mi, fmt.Sprintf("m%d_%s", i, mapSuffix(name)), i, arrays[name])
		out.Maps[name] = l
		spec := &ebpf.MapSpec{Name: l.BPFName, Type: ebpf.Hash,
			KeySize: uint32(l.KeySize), ValueSize: uint32(l.ValueSize), MaxEntries: uint32(info.Config.MaxMapKeys)}
		switch {
		case l.Buckets > 0:
			spec.Type, spec.MaxEntries = ebpf.PerCPUArray, uint32(l.Buckets)
		case l.Single:
			spec.Type, spec.MaxEntries = ebpf.PerCPUArray, 1
		case l.PerCPU:
			spec.Type = ebpf.PerCPUHash
		}
		declaredSpec(spec, mi)
		out.Spec.Maps[l.BPFName] = spec
	}
	maps := out.Spec.Maps
	maps[mapEvents] = &ebpf.MapSpec{Name: mapEvents, Type: ebpf.RingBuf, MaxEntries: ringBytes(info.Config.PerfRBPages)}
	maps[mapLost] = &ebpf.MapSpec{Name: mapLost, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1}
	maps[mapScratch] = &ebpf.MapSpec{Name: mapScratch, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: scratchSize,
		MaxEntries: uint32(max(len(info.Progs), 1))}
	maps[mapGlobals] = &ebpf.MapSpec{Name: mapGlobals, Type: ebpf.Array, KeySize: 4, ValueSize: globalsSize, MaxEntries: 1}
	maps[mapStopped] = &ebpf.MapSpec{Name: mapStopped, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8,
		MaxEntries: uint32(len(info.Progs) + 2)} // and the two syscall dispatchers
	maps[mapFull] = &ebpf.MapSpec{Name: mapFull, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8,
		MaxEntries: uint32(max(len(info.MapNames), 1))}

	next := fuse(out, info.Progs)
	shared, used := -1, 8
	for i, p := range info.Progs {
		// Fused syscall programs run one after another, never nested on
		// a CPU: they share one scratch entry.
		index := i
		if p.Probe.Fused != nil {
			if shared < 0 {
				shared = i
			}
			index = shared
		}
		g := &gen{info: info, prog: p, out: out, opts: opts, index: index,
			vars: map[*sema.Variable]int{}, joinBuf: -1, next: next[i]}
		insns, err := g.program()
		if err != nil {
			return nil, diag.List{err}
		}
		used = max(used, g.scratch)
		name := fmt.Sprintf("p%d", i)
		spec := &ebpf.ProgramSpec{Name: name, Type: p.Probe.ProgramType(),
			Instructions: insns, License: info.Config.License, AttachType: p.Probe.AttachType()}
		if spec.AttachType != 0 && p.Probe.Funcs == nil {
			spec.AttachTo = p.Probe.Func()
		}
		out.Spec.Programs[name] = spec
		prog := &Program{Name: name, Prog: p, StopSlot: i}
		if g.nameSize > 0 {
			prog.Names, prog.NameSize = namesMap(i), g.nameSize
			maps[prog.Names] = &ebpf.MapSpec{Name: prog.Names, Type: ebpf.Array, KeySize: 4,
				ValueSize: uint32(2 * g.nameSize), MaxEntries: uint32(len(p.Probe.Funcs))}
		}
		out.Progs = append(out.Progs, prog)
	}
	// Each CPU's scratch entries are as large as the hungriest program.
	maps[mapScratch].ValueSize = uint32(used)
	for name, spec := range out.stackMaps {
		maps[name] = spec
	}
	return out, nil
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_]`)

// mapSuffix makes a script map name usable in a BPF map name.
func mapSuffix(name string) string {
	s := nonName.ReplaceAllString(name[1:], "_")
	if len(s) > 8 {
		s = s[:8]
	}
	return s
}

// funcName is the BTF function name of a program: its probe, spelled
// with underscores, as bpftrace names its programs.
func funcName(probe string) string {
	return nonName.ReplaceAllString(probe, "_")
}

// funcInfo is the BTF function every program is described by, so that
// fentry-based profilers can attach to it.
func funcInfo(probe string) *btf.Func {
	ctx := &btf.Pointer{Target: &btf.Void{}}
	proto := &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: "ctx", Type: ctx}}}
	return &btf.Func{Name: funcName(probe), Type: proto, Linkage: btf.GlobalFunc}
}

// SortedMaps returns the layouts in name order, the order bpftrace prints
// maps in at exit.
func (o *Output) SortedMaps() []*MapLayout {
	ls := make([]*MapLayout, 0, len(o.Maps))
	for _, l := range o.Maps {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	return ls
}

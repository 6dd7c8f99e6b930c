package kernel

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"gtrace/symbol"
)

// provider is a probe type that can be listed.
type provider struct {
	name    string
	aliases []string
	// qualified providers name probes "target:name"; a pattern that only
	// gives the name matches any target.
	qualified bool
	// explicit providers are listed only when the pattern names them, not
	// through a wildcard, like the probe types bpftrace v0.26 leaves out
	// of its kernel probe list.
	explicit bool
	probes   func(l *lister) ([]string, error)
	params   func(l *lister, probe string) ([]string, error)
	// inBinary, instead of probes, lists the probes of the binaries
	// that the pattern's second part names, as whole lines.
	inBinary func(parts []string) ([]string, error)
}

// providers is sorted by name, the order bpftrace lists them in.
var providers = []provider{
	// fentry and fexit come from BTF, whether or not this kernel lets
	// programs bind to functions: listed only when asked by name.
	{name: "fentry", aliases: []string{"f", "kfunc"}, explicit: true, probes: (*lister).btfFunctions, params: (*lister).fentryParams},
	{name: "fexit", aliases: []string{"fr", "kretfunc"}, explicit: true, probes: (*lister).btfFunctions, params: (*lister).fexitParams},
	{name: "hardware", aliases: []string{"h"}, probes: perfProbes(HardwareEvents)},
	{name: "interval", aliases: []string{"i"}, explicit: true, probes: timeUnits},
	{name: "kprobe", aliases: []string{"k"}, probes: traceable},
	{name: "kretprobe", aliases: []string{"kr"}, probes: traceable},
	{name: "profile", aliases: []string{"p"}, explicit: true, probes: timeUnits},
	{name: "rawtracepoint", aliases: []string{"rt"}, qualified: true, probes: (*lister).rawTracepoints, params: (*lister).rawTracepointParams},
	{name: "software", aliases: []string{"s"}, probes: perfProbes(SoftwareEvents)},
	{name: "tracepoint", aliases: []string{"t"}, qualified: true, probes: (*lister).tracepoints, params: (*lister).tracepointParams},
	{name: "uprobe", aliases: []string{"u"}, inBinary: uprobeProbes},
	{name: "usdt", aliases: []string{"U"}, inBinary: usdtProbes}, // U, as u is uprobe
}

// traceable lists the kernel functions kprobes can attach to, none on a
// kernel without kprobes.
func traceable(*lister) ([]string, error) {
	if !HasKprobes() {
		return nil, nil
	}
	return TraceableFunctions()
}

// btfFunctions lists the traceable functions that fentry can bind to:
// those with a BTF prototype.
func (l *lister) btfFunctions() ([]string, error) {
	all, err := TraceableFunctions()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		if strings.Contains(f, ":") {
			continue // module functions live in the module's BTF
		}
		if _, err := KernelFunc(f); err == nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// fentryParams lists a function's parameters, as -lv shows them.
func (l *lister) fentryParams(fn string) ([]string, error) {
	proto, err := funcProto(fn)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range proto.Params {
		out = append(out, CDecl(p.Type, p.Name))
	}
	return out, nil
}

// fexitParams lists a function's parameters and its return value.
func (l *lister) fexitParams(fn string) ([]string, error) {
	out, err := l.fentryParams(fn)
	if err != nil {
		return nil, err
	}
	proto, _ := funcProto(fn)
	return append(out, CDecl(proto.Return, "retval")), nil
}

func funcProto(fn string) (*btf.FuncProto, error) {
	f, err := KernelFunc(fn)
	if err != nil {
		return nil, err
	}
	proto, ok := f.Type.(*btf.FuncProto)
	if !ok {
		return nil, fmt.Errorf("%s has no prototype", fn)
	}
	return proto, nil
}

// uprobeProbes lists the functions of the binary the pattern names, as
// uprobe:BINARY:function lines.
func uprobeProbes(parts []string) ([]string, error) {
	if len(parts) < 3 || parts[1] == "" || HasWildcard(parts[1]) {
		return nil, nil
	}
	path, err := symbol.ResolveBinary(parts[1])
	if err != nil {
		return nil, err
	}
	funcs, err := symbol.Functions(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range matching(strings.Join(parts[2:], ":"), funcs) {
		out = append(out, "uprobe:"+path+":"+f)
	}
	return out, nil
}

// ListProbes returns the probes matching pattern, one per line, as
// bpftrace -l prints them. pattern may hold several comma-separated
// patterns; an empty pattern lists everything.
func ListProbes(pattern string) ([]string, error) {
	return (&lister{}).list(pattern, false)
}

// ListProbesVerbose is like ListProbes but follows each probe with its
// arguments, indented by four spaces, as bpftrace -lv prints them.
func ListProbesVerbose(pattern string) ([]string, error) {
	return (&lister{}).list(pattern, true)
}

// ExpandTracepoints returns the "category:event" names of the tracepoints
// matching pattern, sorted. It returns no names and no error if nothing
// matches, so the caller can word that error for its context.
func ExpandTracepoints(pattern string) ([]string, error) {
	all, err := (&lister{}).tracepoints()
	if err != nil {
		return nil, err
	}
	return matching(pattern, all), nil
}

// lister holds what one listing has loaded, so that BTF is parsed at most
// once per call.
type lister struct {
	spec *btf.Spec
	// rawParams maps "module:name" to the raw tracepoint's arguments.
	rawParams map[string][]string
}

func (l *lister) list(pattern string, verbose bool) ([]string, error) {
	var out []string
	for _, pat := range strings.Split(pattern, ",") {
		pat = strings.TrimSpace(pat)
		// Like bpftrace, a bare word is a pattern for the probe name.
		if pat == "" {
			pat = "*:*"
		} else if !strings.Contains(pat, ":") {
			pat = "*:" + pat
		}

		lines, err := l.listOne(pat, verbose)
		if err != nil {
			return nil, err
		}
		out = append(out, lines...)
	}
	return out, nil
}

func (l *lister) listOne(pattern string, verbose bool) ([]string, error) {
	parts := strings.Split(pattern, ":")
	// bpftrace splits with getline, which drops one trailing empty part.
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	_, search, _ := strings.Cut(pattern, ":")

	var out []string
	for _, p := range matchingProviders(parts[0]) {
		if p.inBinary != nil {
			lines, err := p.inBinary(parts)
			if err != nil {
				return nil, fmt.Errorf("list %s probes: %w", p.name, err)
			}
			out = append(out, lines...)
			continue
		}
		in := search
		if p.qualified && len(parts) <= 2 {
			in = "*:" + search
		} else if in == "" {
			in = "*"
		}

		all, err := p.probes(l)
		if err != nil {
			return nil, fmt.Errorf("list %s probes: %w", p.name, err)
		}
		for _, m := range matching(in, all) {
			out = append(out, p.name+":"+m)
			if !verbose || p.params == nil {
				continue
			}
			params, err := p.params(l, m)
			if err != nil {
				return nil, fmt.Errorf("list %s:%s arguments: %w", p.name, m, err)
			}
			for _, param := range params {
				out = append(out, "    "+param)
			}
		}
	}
	return out, nil
}

// matchingProviders expands the provider part of a pattern. An unknown
// provider matches nothing, as in bpftrace.
func matchingProviders(pattern string) []provider {
	if pattern == "" {
		pattern = "*"
	}
	var out []provider
	for _, p := range providers {
		if HasWildcard(pattern) {
			if !p.explicit && Match(pattern, p.name) {
				out = append(out, p)
			}
		} else if name := strings.ToLower(pattern); name == p.name || slices.Contains(p.aliases, name) || slices.Contains(p.aliases, pattern) {
			out = append(out, p)
		}
	}
	return out
}

// matching returns the sorted, deduplicated elements of all matching pattern.
func matching(pattern string, all []string) []string {
	var out []string
	for _, s := range all {
		if Match(pattern, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// perfProbes lists an event table the way bpftrace does: every name and
// alias, followed by an empty count.
func perfProbes(table []PerfEvent) func(*lister) ([]string, error) {
	return func(*lister) ([]string, error) {
		var out []string
		for _, ev := range table {
			out = append(out, ev.Name+":")
			if ev.Alias != "" {
				out = append(out, ev.Alias+":")
			}
		}
		return out, nil
	}
}

// timeUnits lists the units of interval and profile probes as bpftrace
// v0.26 does, each with an empty rate: "hz:", "ms:", "s:", "us:".
func timeUnits(*lister) ([]string, error) {
	return []string{"hz:", "ms:", "s:", "us:"}, nil
}

// tracepoints lists "category:event" from available_events, as bpftrace
// does.
func (l *lister) tracepoints() ([]string, error) {
	b, err := readTracefs("available_events")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); strings.Contains(line, ":") {
			out = append(out, line)
		}
	}
	return out, nil
}

func (l *lister) tracepointParams(probe string) ([]string, error) {
	category, event, _ := strings.Cut(probe, ":")
	f, err := TracepointFormat(category, event)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, field := range f.Fields {
		out = append(out, field.Decl)
	}
	return out, nil
}

// rawTracePrefixes name the BTF functions the kernel generates for every
// tracepoint. bpftrace v0.26 derives raw tracepoints from them rather than
// from btf_trace_* typedefs because their parameters have names.
var rawTracePrefixes = []string{"__probestub_", "__traceiter_"}

// rawTracepoints lists "module:name" for every raw tracepoint in vmlinux
// and module BTF. Without kernel BTF there are none to list.
func (l *lister) rawTracepoints() ([]string, error) {
	if l.rawParams == nil {
		if err := l.loadRawTracepoints(); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(l.rawParams))
	for name := range l.rawParams {
		out = append(out, name)
	}
	return out, nil
}

func (l *lister) rawTracepointParams(probe string) ([]string, error) {
	return l.rawParams[probe], nil
}

func (l *lister) loadRawTracepoints() error {
	l.rawParams = make(map[string][]string)

	cache := btf.NewCache()
	vmlinux, err := cache.Kernel()
	if errors.Is(err, ebpf.ErrNotSupported) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load kernel btf: %w", err)
	}
	if err := l.addRawTracepoints("vmlinux", vmlinux); err != nil {
		return err
	}

	modules, err := cache.Modules()
	if err != nil {
		return fmt.Errorf("list btf modules: %w", err)
	}
	for _, mod := range modules {
		spec, err := cache.Module(mod)
		if err != nil {
			return fmt.Errorf("load btf of module %s: %w", mod, err)
		}
		if err := l.addRawTracepoints(mod, spec); err != nil {
			return err
		}
	}
	return nil
}

func (l *lister) addRawTracepoints(module string, spec *btf.Spec) error {
	for typ, err := range spec.All() {
		if err != nil {
			return fmt.Errorf("iterate btf of %s: %w", module, err)
		}
		fn, ok := typ.(*btf.Func)
		if !ok {
			continue
		}
		var name string
		for _, prefix := range rawTracePrefixes {
			if n, ok := strings.CutPrefix(fn.Name, prefix); ok {
				name = n
				break
			}
		}
		proto, ok := fn.Type.(*btf.FuncProto)
		if name == "" || !ok || len(proto.Params) == 0 {
			continue
		}
		// bpftrace skips tracepoints whose arguments (plus the leading
		// context pointer) do not fit in registers.
		if len(proto.Params) > maxRegisterArgs() {
			continue
		}
		key := module + ":" + name
		if _, dup := l.rawParams[key]; dup {
			continue
		}
		params := []string{}
		for _, p := range proto.Params[1:] {
			params = append(params, CDecl(p.Type, "")+" "+p.Name)
		}
		l.rawParams[key] = params
	}
	return nil
}

// maxRegisterArgs is the number of function arguments passed in registers.
func maxRegisterArgs() int {
	switch runtime.GOARCH {
	case "arm64", "loong64", "mips64", "mips64le", "ppc64", "ppc64le", "riscv64":
		return 8
	case "s390x":
		return 5
	case "arm":
		return 4
	default:
		return 6
	}
}

// usdtProbes lists the USDT probes of the binary in a pattern
// usdt:BINARY:[provider:]name as bpftrace does, one line per probe however
// many sites it has: "usdt:BINARY:provider:name". BINARY may have
// wildcards. A pattern that does not name a binary lists nothing, nor does
// a binary that is not found, unless the pattern names the usdt provider.
func usdtProbes(parts []string) ([]string, error) {
	if len(parts) < 3 || parts[1] == "" || parts[1] == "*" {
		return nil, nil
	}
	var paths []string
	if HasWildcard(parts[1]) {
		paths, _ = symbol.GlobBinaries(parts[1])
	} else if path, err := symbol.ResolveBinary(parts[1]); err == nil {
		paths = []string{path}
	} else if HasWildcard(parts[0]) {
		return nil, nil
	} else {
		return nil, err
	}
	var all []string
	for _, path := range paths {
		probes, err := symbol.USDTProbes(path)
		if err != nil {
			if HasWildcard(parts[1]) || HasWildcard(parts[0]) {
				continue // not an ELF file, or not one of ours
			}
			return nil, err
		}
		for _, u := range probes {
			all = append(all, path+":"+u.Provider+":"+u.Name)
		}
	}
	in := strings.Join(parts[1:], ":")
	if len(parts) == 3 { // usdt:BINARY:name, of any provider
		in = parts[1] + ":*:" + parts[2]
	}
	var out []string
	for _, m := range matching(in, all) {
		out = append(out, "usdt:"+m)
	}
	return out, nil
}

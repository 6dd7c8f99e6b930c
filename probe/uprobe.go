package probe

import (
	"fmt"
	"gtrace/lang/builtin"
	"gtrace/lang/token"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
	"gtrace/symbol"
)

func init() {
	register(&provider{kind: Uprobe, newestFirst: true, names: []string{"uprobe", "u"},
		progType: ebpf.Kprobe, context: Registers, builtins: []builtin.Var{builtin.ArgN, builtin.Func, builtin.Args},
		userSpace: true, parse: parseUprobe(Uprobe), attach: attachUprobe,
		list: &listing{inBinary: inBinaryFunctions("uprobe"), params: uprobeParams}})
	// A binary's functions are listed once, as uprobes, unless the
	// pattern names uretprobe.
	register(&provider{kind: Uretprobe, newestFirst: true, names: []string{"uretprobe", "ur"},
		progType: ebpf.Kprobe, context: Registers, builtins: []builtin.Var{builtin.Func, builtin.Retval},
		userSpace: true, parse: parseUprobe(Uretprobe), attach: attachUprobe,
		list: &listing{explicit: true, inBinary: inBinaryFunctions("uretprobe")}})
}

// parseUprobe accepts uprobe:BINARY:func, uprobe:BINARY:func+offset,
// uprobe:BINARY:address and wildcards over the binary's functions.
// BINARY is a path, or a library or program name found as the loader
// and the shell would find it; with -p, it may be left out, or be a
// wildcard, for every binary the process maps (Env.binaries).
func parseUprobe(kind Kind) func(parts []string, env *Env) ([]Probe, error) {
	name := "uprobe"
	if kind == Uretprobe {
		name = "uretprobe"
	}
	return func(parts []string, env *Env) ([]Probe, error) {
		if len(parts) > 0 && strings.Contains(parts[0], "@") && !fileExists(parts[0]) {
			return parseSourceUprobe(kind, name, parts[0], parts[1:])
		}
		if len(parts) > 2 && parts[1] == "cpp" {
			return parseCppUprobe(kind, name, parts[0], strings.Join(parts[2:], ":"), env)
		}
		if len(parts) != 2 || parts[0] == "" && env.Pid == 0 || parts[1] == "" {
			return nil, fmt.Errorf("%s probe must have the form %s:binary:function", name, name)
		}
		paths, err := env.binaries(parts[0])
		if err != nil {
			return nil, err
		}
		if parts[0] != "" && !kernel.HasWildcard(parts[0]) {
			return uprobesIn(kind, name, paths[0], parts[1], env.Unsafe)
		}
		// Of several binaries, those without the function have no probe.
		var probes []Probe
		for _, path := range paths {
			if more, err := uprobesIn(kind, name, path, parts[1], env.Unsafe); err == nil {
				probes = append(probes, more...)
			}
		}
		return probes, nil
	}
}

// uprobesIn resolves the function part of a uprobe in the binary path:
// an address, a function and an offset, a function, or a wildcard. An
// address or offset is checked when attaching, as bpftrace does, so that
// missing_probes applies to it.
func uprobesIn(kind Kind, name, path, fn string, unsafe bool) ([]Probe, error) {
	p := Probe{Kind: kind, Target: path, Unsafe: unsafe}
	if fn[0] >= '0' && fn[0] <= '9' {
		addr, err := token.ParseInt(fn)
		if err != nil {
			return nil, fmt.Errorf("%s:%s:%s: invalid address: %w", name, path, fn, err)
		}
		p.Address, p.Name = addr, name+":"+path+":"+strconv.FormatUint(addr, 10)
		return []Probe{p}, nil
	}
	if f, off, ok := strings.Cut(fn, "+"); ok {
		n, err := token.ParseInt(off)
		if err != nil || kind == Uretprobe {
			return nil, fmt.Errorf("%s:%s:%s: an offset must be a number, on a uprobe", name, path, fn)
		}
		if !hasFunction(path, f) {
			return nil, &MissingError{Provider: name, Target: path + ":" + f, Reason: noSymbol(path, f), Hint: strippedHint(path)}
		}
		p.Event, p.Offset = f, n
		p.Name = name + ":" + path + ":" + f + "+" + strconv.FormatUint(n, 10)
		return []Probe{p}, nil
	}
	funcs := []string{fn}
	if !kernel.HasWildcard(fn) && !hasFunction(path, fn) {
		// A C++ function may be named as written in the source.
		if cpp, err := cppMatches(path, fn); err == nil && len(cpp) == 1 {
			p.Event, p.Name = cpp[0].Mangled, name+":"+path+":"+fn
			return []Probe{p}, nil
		}
		if symbol.Stub(path) {
			return nil, &EmptyError{fmt.Sprintf("%s defines no functions (a compatibility stub, such as glibc 2.34's libpthread, whose functions moved to libc): %s:%s:%s will see no events", path, name, path, fn)}
		}
		return nil, &MissingError{Provider: name, Target: path + ":" + fn, Reason: noSymbol(path, fn), Hint: strippedHint(path)}
	}
	if kernel.HasWildcard(fn) {
		all, err := symbol.Functions(path)
		if err != nil {
			return nil, fmt.Errorf("read the symbols of %s: %w", path, err)
		}
		funcs = funcs[:0]
		for _, f := range all {
			if kernel.Match(fn, f) {
				funcs = append(funcs, f)
			}
		}
	}
	probes := make([]Probe, 0, len(funcs))
	for _, f := range funcs {
		q := p
		q.Event, q.Name = f, name+":"+path+":"+f
		probes = append(probes, q)
	}
	return probes, nil
}

// parseCppUprobe accepts uprobe:BINARY:cpp:PATTERN, where PATTERN
// matches C++ functions by their demangled names, such as ns::Class::f.
func parseCppUprobe(kind Kind, name, binary, pattern string, env *Env) ([]Probe, error) {
	paths, err := env.binaries(binary)
	if err != nil {
		return nil, err
	}
	if len(paths) != 1 {
		return nil, fmt.Errorf("%s:%s:cpp:%s: a C++ probe must name one binary", name, binary, pattern)
	}
	path := paths[0]
	funcs, err := cppMatches(path, pattern)
	if err != nil {
		return nil, err
	}
	probes := make([]Probe, 0, len(funcs))
	for _, f := range funcs {
		probes = append(probes, Probe{Kind: kind, Target: path, Event: f.Mangled,
			Name: name + ":" + path + ":cpp:" + f.Name})
	}
	return probes, nil
}

// cppMatches lists the C++ functions of path whose demangled name
// matches pattern.
func cppMatches(path, pattern string) ([]symbol.CppFunction, error) {
	all, err := symbol.CppFunctions(path)
	if err != nil {
		return nil, fmt.Errorf("read the symbols of %s: %w", path, err)
	}
	var out []symbol.CppFunction
	for _, f := range all {
		if kernel.Match(pattern, f.Name) {
			out = append(out, f)
		}
	}
	return out, nil
}

// noSymbol says that path has no function fn, and that it is stripped
// only when it has no .symtab.
func noSymbol(path, fn string) string {
	msg := fmt.Sprintf("%s has no function symbol %s", path, fn)
	if !symbol.HasSymbols(path) {
		msg += " (a stripped binary keeps only its dynamic symbols)"
	}
	return msg
}

// strippedHint says that path is stripped, when it has no .symtab.
func strippedHint(path string) string {
	if symbol.HasSymbols(path) {
		return ""
	}
	return path + " is stripped: it keeps only its dynamic symbols."
}

// hasFunction reports whether path has a function symbol named fn.
func hasFunction(path, fn string) bool {
	all, err := symbol.Functions(path)
	if err != nil {
		return false
	}
	i := sort.SearchStrings(all, fn)
	return i < len(all) && all[i] == fn
}

// attachUprobe attaches through the uprobe PMU, where uprobeOffset
// says. pid, when not 0, limits the probe to that process.
func attachUprobe(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error) {
	if p.Funcs != nil {
		return attachUprobeMulti(p, prog, pid)
	}
	off, err := uprobeOffset(p)
	if err != nil {
		return nil, err
	}
	l, err := openProbe("uprobe", p.Target, off, p.Kind == Uretprobe, pid, prog)
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

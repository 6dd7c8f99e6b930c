package probe

import (
	"errors"
	"fmt"
	"gtrace/lang/builtin"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
	"gtrace/symbol"
)

func init() {
	register(&provider{kind: Uprobe, names: []string{"uprobe", "u"},
		progType: ebpf.Kprobe, context: Registers, builtins: []builtin.Var{builtin.ArgN, builtin.Func, builtin.Args},
		userSpace: true, parse: parseUprobe(Uprobe), attach: attachUprobe,
		list: &listing{inBinary: inBinaryFunctions("uprobe"), params: uprobeParams}})
	// A binary's functions are listed once, as uprobes, unless the
	// pattern names uretprobe.
	register(&provider{kind: Uretprobe, names: []string{"uretprobe", "ur"},
		progType: ebpf.Kprobe, context: Registers, builtins: []builtin.Var{builtin.Func, builtin.Retval},
		userSpace: true, parse: parseUprobe(Uretprobe), attach: attachUprobe,
		list: &listing{explicit: true, inBinary: inBinaryFunctions("uretprobe")}})
}

// parseUprobe accepts uprobe:BINARY:func, uprobe:BINARY:func+offset,
// uprobe:BINARY:0xaddress and wildcards over the binary's functions.
// BINARY is a path, or a library or program name found as the loader
// and the shell would find it.
func parseUprobe(kind Kind) func(parts []string) ([]Probe, error) {
	name := "uprobe"
	if kind == Uretprobe {
		name = "uretprobe"
	}
	return func(parts []string) ([]Probe, error) {
		if strings.Contains(parts[0], "@") && !fileExists(parts[0]) {
			return parseSourceUprobe(kind, name, parts[0], parts[1:])
		}
		if len(parts) > 2 && parts[1] == "cpp" {
			return parseCppUprobe(kind, name, parts[0], strings.Join(parts[2:], ":"))
		}
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("%s probe must have the form %s:binary:function", name, name)
		}
		path, err := symbol.ResolveBinary(parts[0])
		if err != nil {
			return nil, err
		}
		fn := parts[1]
		p := Probe{Kind: kind, Target: path}
		if strings.HasPrefix(fn, "0x") {
			addr, err := strconv.ParseUint(fn[2:], 16, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%s:%s: invalid address", name, parts[0], fn)
			}
			off, err := symbol.FileOffset(path, addr)
			if err != nil {
				return nil, fmt.Errorf("%s:%s:%s: %w", name, parts[0], fn, err)
			}
			p.Address, p.Name = off, name+":"+path+":"+fn
			return []Probe{p}, nil
		}
		if f, off, ok := strings.Cut(fn, "+"); ok {
			n, err := strconv.ParseUint(off, 0, 64)
			if err != nil || kind == Uretprobe {
				return nil, fmt.Errorf("%s:%s:%s: an offset must be a number, on a uprobe", name, parts[0], fn)
			}
			p.Event, p.Offset = f, n
			p.Name = name + ":" + path + ":" + fn
			return []Probe{p}, nil
		}
		funcs := []string{fn}
		if !kernel.HasWildcard(fn) && !hasFunction(path, fn) {
			// A C++ function may be named as written in the source.
			if cpp, err := cppMatches(path, fn); err == nil && len(cpp) == 1 {
				q := p
				q.Event, q.Name = cpp[0].Mangled, name+":"+path+":"+fn
				return []Probe{q}, nil
			}
			if symbol.Stub(path) {
				return nil, &EmptyError{fmt.Sprintf("%s defines no functions (a compatibility stub, such as glibc 2.34's libpthread, whose functions moved to libc): %s:%s:%s will see no events", path, name, parts[0], fn)}
			}
			return nil, &MissingError{Provider: name, Target: path + ":" + fn, Reason: noSymbol(path, fn)}
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
}

// parseCppUprobe accepts uprobe:BINARY:cpp:PATTERN, where PATTERN
// matches C++ functions by their demangled names, such as ns::Class::f.
func parseCppUprobe(kind Kind, name, binary, pattern string) ([]Probe, error) {
	path, err := symbol.ResolveBinary(binary)
	if err != nil {
		return nil, err
	}
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

// hasFunction reports whether path has a function symbol named fn.
func hasFunction(path, fn string) bool {
	all, err := symbol.Functions(path)
	if err != nil {
		return false
	}
	i := sort.SearchStrings(all, fn)
	return i < len(all) && all[i] == fn
}

// attachUprobe attaches through the uprobe PMU. pid, when not 0, limits
// the probe to that process.
func attachUprobe(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error) {
	ex, err := link.OpenExecutable(p.Target)
	if err != nil {
		return nil, err
	}
	opts := &link.UprobeOptions{Address: p.Address, Offset: p.Offset, PID: pid}
	var l link.Link
	if p.Kind == Uretprobe {
		l, err = ex.Uretprobe(p.Event, prog, opts)
	} else {
		l, err = ex.Uprobe(p.Event, prog, opts)
	}
	if errors.Is(err, link.ErrNoSymbol) {
		return nil, fmt.Errorf("%s: %w", noSymbol(p.Target, p.Event), err)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("this kernel has no uprobes: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

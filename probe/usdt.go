package probe

import (
	"cmp"
	"errors"
	"fmt"
	"gtrace/lang/builtin"
	"os"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
	"gtrace/symbol"
)

func init() {
	// U, as u is uprobe.
	register(&provider{kind: Usdt, newestFirst: true, names: []string{"usdt", "U"},
		progType: ebpf.Kprobe, context: USDTArgs, builtins: []builtin.Var{builtin.ArgN},
		userSpace: true, parse: parseUsdt, attach: attachUsdt,
		list: &listing{inBinary: (*lister).usdt}})
}

// parseUsdt accepts usdt:BINARY:provider:name and usdt:BINARY:name, the
// latter for a name that only one provider uses; '*' wildcards in any
// part, and an empty provider for any. BINARY is found as uprobes find
// theirs (Env.binaries); with -p it may be left out. Every site of a matching
// probe is a Probe of its own, so a marker that the compiler copied, or
// that the source repeats, is traced wherever it is.
func parseUsdt(parts []string, env *Env) ([]Probe, error) {
	if len(parts) != 2 && len(parts) != 3 {
		return nil, errors.New("usdt probe must have the form usdt:binary:[provider:]name")
	}
	target, provider, name := parts[0], "", parts[len(parts)-1]
	if len(parts) == 3 {
		provider = parts[1]
	}
	if target == "" && env.Pid == 0 {
		return nil, errors.New("usdt probe must name its binary: usdt:binary:[provider:]name")
	}
	if name == "" {
		return nil, errors.New("usdt probe must have a target function or wildcard")
	}
	paths, err := env.binaries(target)
	if err != nil {
		return nil, err
	}
	anyProvider := provider == ""
	if anyProvider {
		provider = "*"
	}

	var probes []Probe
	for _, path := range paths {
		sites, err := symbol.USDTProbes(path)
		if err != nil && len(paths) > 1 {
			continue // of several binaries, one that cannot be read has no probes
		}
		if err != nil {
			return nil, err
		}
		for i := range sites {
			u := &sites[i]
			if !kernel.Match(provider, u.Provider) || !kernel.Match(name, u.Name) {
				continue
			}
			probes = append(probes, Probe{Kind: Usdt, Target: path, Event: u.Name, USDT: u,
				Name: "usdt:" + path + ":" + u.Provider + ":" + u.Name})
		}
	}
	// As bpftrace lists them: by name, each probe's sites in file order.
	slices.SortStableFunc(probes, func(a, b Probe) int { return cmp.Compare(a.Name, b.Name) })

	// A name alone must be one provider's, unless it is a wildcard. No
	// match at all is for the checker to judge (missing_probes).
	if anyProvider && target != "" && !kernel.HasWildcard(target) && !kernel.HasWildcard(name) {
		var names []string
		for _, p := range probes {
			names = append(names, p.Name)
		}
		if names = slices.Compact(names); len(names) > 1 {
			return nil, fmt.Errorf("namespace for usdt:%s:%s not specified, matched %d probes (%s): "+
				"name the provider or use '*' to attach to all of them",
				target, name, len(names), strings.Join(names, ", "))
		}
	}
	return probes, nil
}

// usdt lists the USDT probes of the binary in a pattern
// usdt:BINARY:[provider:]name as bpftrace does, one line per probe however
// many sites it has: "usdt:BINARY:provider:name". BINARY may have
// wildcards, or be left out with -p. A pattern that does not name a
// binary lists nothing, nor does a binary that is not found, unless the
// pattern names the usdt provider.
func (l *lister) usdt(parts []string) ([]string, error) {
	target, rest, ok := l.userTarget(parts)
	if !ok || target == "*" && l.pid == 0 {
		return nil, nil
	}
	paths, err := l.binaries(target)
	if err != nil {
		if kernel.HasWildcard(parts[0]) {
			return nil, nil
		}
		return nil, err
	}
	var all []string
	for _, path := range paths {
		probes, err := symbol.USDTProbes(path)
		if err != nil {
			if kernel.HasWildcard(target) || kernel.HasWildcard(parts[0]) {
				continue // not an ELF file, or not one of ours
			}
			return nil, err
		}
		for _, u := range probes {
			all = append(all, path+":"+u.Provider+":"+u.Name)
		}
	}
	in := target + ":" + rest
	if !strings.Contains(rest, ":") { // usdt:BINARY:name, of any provider
		in = target + ":*:" + rest
	}
	var out []string
	for _, m := range kernel.MatchAll(in, all) {
		out = append(out, "usdt:"+m)
	}
	return out, nil
}

// attachUsdt attaches a uprobe at the probe's site. The kernel raises the
// probe's semaphore while the uprobe is attached and lowers it when it is
// closed, also when gtrace is killed. pid, when not 0, limits the probe,
// and the semaphore, to that process.
func attachUsdt(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error) {
	ex, err := link.OpenExecutable(p.Target)
	if err != nil {
		return nil, err
	}
	// Address is an offset in the file, as the kernel takes it, and so is
	// the semaphore's.
	opts := &link.UprobeOptions{Address: p.USDT.LocationOffset, PID: pid,
		RefCtrOffset: p.USDT.SemaphoreOffset}
	l, err := ex.Uprobe("", prog, opts)
	if errors.Is(err, link.ErrNotSupported) && opts.RefCtrOffset != 0 {
		return nil, fmt.Errorf("the probe has a semaphore, and this kernel cannot raise it (uprobe ref_ctr_offset, Linux 4.20): %w", err)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("this kernel has no uprobes: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

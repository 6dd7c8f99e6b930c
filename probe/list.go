package probe

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gtrace/kernel"
	"gtrace/symbol"
)

// listing is how a provider lists its probes for -l and -lv.
type listing struct {
	// qualified providers name probes "target:name"; a pattern that only
	// gives the name matches any target.
	qualified bool
	// explicit providers are listed only when the pattern names them, not
	// through a wildcard, like the probe types bpftrace v0.26 leaves out
	// of its kernel probe list.
	explicit bool
	// counted providers' attach points end in a count or a rate, which
	// their listing leaves empty ("interval:ms:").
	counted bool
	// probes lists the probes, after the provider's name.
	probes func(l *lister) ([]string, error)
	// params lists a probe's arguments for -lv; nil lists none.
	params func(l *lister, probe string) ([]string, error)
	// inBinary, instead of probes, lists the probes of the binaries
	// that the pattern's second part names, as whole lines.
	inBinary func(l *lister, parts []string) ([]string, error)
}

// ListOptions are what -l takes besides the pattern.
type ListOptions struct {
	// Verbose follows each probe with its arguments, indented by four
	// spaces, and each type with its definition, as bpftrace -lv does.
	Verbose bool
	// Pid, when not 0, lists the user-space probes of that process's
	// program and libraries too.
	Pid int
}

// List returns the probes matching pattern, one per line, as bpftrace -l
// prints them. pattern may hold several comma-separated patterns; an
// empty pattern lists everything. Patterns such as "struct task_struct"
// list the kernel's types instead.
func List(pattern string, opts ListOptions) ([]string, error) {
	return (&lister{pid: opts.Pid}).list(pattern, opts.Verbose)
}

// lister holds what one listing has loaded, so that BTF is parsed at most
// once per call.
type lister struct {
	pid   int
	funcs []string // the traceable kernel functions, once read
	types kernel.TypeLister
	// rawParams maps "module:name" to the raw tracepoint's arguments.
	rawParams map[string][]string
}

func (l *lister) list(pattern string, verbose bool) ([]string, error) {
	var out []string
	for _, pat := range strings.Split(pattern, ",") {
		pat = strings.TrimSpace(pat)
		if kernel.IsTypePattern(pat) {
			lines, err := l.types.List(strings.Join(strings.Fields(pat), " "), verbose)
			if err != nil {
				return nil, err
			}
			out = append(out, lines...)
			continue
		}
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

// ListScript lists the probes that a script's attach points, as
// written, stand for, as bpftrace -l lists the probes of a script: BEGIN,
// END and self probes are left out, and a count or rate is left empty.
func ListScript(attachPoints []string, opts ListOptions) ([]string, error) {
	l := &lister{pid: opts.Pid}
	var out []string
	for _, ap := range attachPoints {
		parts := strings.Split(ap, ":")
		p := lookup(parts[0])
		if p == nil || p.list == nil || p.kind == Self {
			continue
		}
		if p.list.counted && len(parts) > 2 {
			ap = parts[0] + ":" + parts[1] + ":"
		}
		lines, err := l.listOne(ap, opts.Verbose)
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
	for _, p := range listedProviders(parts[0]) {
		name, ls := p.names[0], p.list
		if ls.inBinary != nil {
			lines, err := ls.inBinary(l, parts)
			if err != nil {
				return nil, fmt.Errorf("list %s probes: %w", name, err)
			}
			out = append(out, l.withParams(ls, lines, verbose)...)
			continue
		}
		in := search
		if ls.qualified && len(parts) <= 2 {
			in = "*:" + search
		} else if in == "" {
			in = "*"
		}
		all, err := ls.probes(l)
		if err != nil {
			return nil, fmt.Errorf("list %s probes: %w", name, err)
		}
		for _, m := range kernel.MatchAll(in, all) {
			out = append(out, name+":"+m)
			if !verbose || ls.params == nil {
				continue
			}
			params, err := ls.params(l, m)
			if err != nil {
				return nil, fmt.Errorf("list %s:%s arguments: %w", name, m, err)
			}
			for _, param := range params {
				out = append(out, "    "+param)
			}
		}
	}
	return out, nil
}

// listedProviders expands the provider part of a pattern into the
// providers that list probes, sorted by name, the order bpftrace lists
// them in. An unknown provider matches nothing, as in bpftrace.
func listedProviders(pattern string) []*provider {
	if pattern == "" {
		pattern = "*"
	}
	// A name is matched as spelt (U is usdt, u uprobe), else in lower
	// case (HARDWARE).
	name := pattern
	if !slices.ContainsFunc(slices.Collect(maps.Values(providers)), func(p *provider) bool {
		return slices.Contains(p.names, name)
	}) {
		name = strings.ToLower(pattern)
	}
	var out []*provider
	for _, p := range slices.Collect(maps.Values(providers)) {
		if p.list == nil {
			continue
		}
		if kernel.HasWildcard(pattern) {
			if !p.list.explicit && kernel.Match(pattern, p.names[0]) {
				out = append(out, p)
			}
		} else if slices.Contains(p.names, name) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *provider) int { return cmp.Compare(a.names[0], b.names[0]) })
	return out
}

// inBinaryFunctions lists the functions of the binaries the pattern
// names, as PROVIDER:BINARY:function lines.
func inBinaryFunctions(provider string) func(l *lister, parts []string) ([]string, error) {
	return func(l *lister, parts []string) ([]string, error) {
		target, rest, ok := l.userTarget(parts)
		if !ok {
			return nil, nil
		}
		paths, err := l.binaries(target)
		if err != nil {
			if kernel.HasWildcard(parts[0]) {
				return nil, nil
			}
			return nil, err
		}
		var out []string
		for _, path := range paths {
			funcs, err := symbol.Functions(path)
			if err != nil {
				if len(paths) > 1 {
					continue // not one of the files to list
				}
				return nil, err
			}
			for _, f := range kernel.MatchAll(rest, funcs) {
				out = append(out, provider+":"+path+":"+f)
			}
		}
		return out, nil
	}
}

// userTarget splits a user-space pattern's parts after the provider
// into the binary and the rest. With -p, a pattern that names no binary
// ("uprobe:*") is of any of the process's; without, it lists nothing,
// as in bpftrace.
func (l *lister) userTarget(parts []string) (target, rest string, ok bool) {
	switch {
	case len(parts) >= 3 && parts[1] != "":
		return parts[1], strings.Join(parts[2:], ":"), true
	case l.pid != 0 && len(parts) == 2:
		return "*", parts[1], true
	case l.pid != 0 && len(parts) == 1:
		return "*", "*", true
	}
	return "", "", false
}

// lookup finds the provider a name or alias names, or nil.
func lookup(name string) *provider {
	for _, p := range providers {
		if slices.Contains(p.names, name) {
			return p
		}
	}
	return nil
}

// binaries resolves the binary of a user-space pattern as attach points
// resolve theirs: with -p, "*" is every file the process maps.
func (l *lister) binaries(target string) ([]string, error) {
	return (&Env{Pid: l.pid}).binaries(target)
}

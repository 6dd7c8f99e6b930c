package probe

import (
	"errors"
	"fmt"
	"strings"

	"gtrace/kernel"
	"gtrace/symbol"
)

// ParseForPid is Parse with -p PID: a uprobe or USDT probe that names no
// binary, or a wildcard for it ("usdt:::name", "uprobe:*:func"), stands
// for the probes of the files the process maps that match, as in
// bpftrace; files without the probes are passed over. A path that only
// the process's mount namespace has is found there.
func ParseForPid(text string, pid int) ([]Probe, error) {
	parts := splitParts(text)
	p := lookup(parts[0])
	if p == nil || !p.userSpace || len(parts) < 3 {
		return Parse(text)
	}
	target := parts[1]
	if target != "" && !kernel.HasWildcard(target) {
		// A path the process sees in its own mount namespace.
		if inNS := fmt.Sprintf("/proc/%d/root%s", pid, target); strings.HasPrefix(target, "/") && !fileExists(target) && fileExists(inNS) {
			return p.parse(append([]string{inNS}, parts[2:]...))
		}
		return Parse(text)
	}
	if target == "" {
		target = "*"
	}
	paths, err := symbol.MappedPaths(pid)
	if err != nil {
		return nil, err
	}
	var probes []Probe
	for _, path := range kernel.MatchAll(target, paths) {
		found, err := p.parse(append([]string{path}, parts[2:]...))
		var missing *MissingError
		var empty *EmptyError
		switch {
		case errors.As(err, &missing), errors.As(err, &empty):
		case err != nil:
			return nil, err
		}
		probes = append(probes, found...)
	}
	return probes, nil
}

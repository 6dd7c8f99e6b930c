package runtime

import (
	"gtrace/codegen"
	"gtrace/probe"
)

// attachWaves orders the attaching of probes so that probes on the same
// event fire in the script's order, as bpftrace's do: the kernel runs the
// programs of one event in the order they were attached, or, for some
// kinds (probe.Probe.NewestFirst), the other way round. Probes attach in
// waves, each after the one before, and the n-th of several probes on
// one event goes in wave n, counted from the end for those kinds. Probes
// on distinct events all go in the first wave, in parallel.
func attachWaves(attach []*codegen.Program) [][]int {
	rank := make([]int, len(attach))
	seen := map[string]int{}
	order := func(i int) {
		names := eventNames(&attach[i].Prog.Probe)
		for _, name := range names {
			rank[i] = max(rank[i], seen[name])
		}
		for _, name := range names {
			seen[name] = rank[i] + 1
		}
	}
	for i := range attach {
		if !attach[i].Prog.Probe.NewestFirst() {
			order(i)
		}
	}
	for i := len(attach) - 1; i >= 0; i-- {
		if attach[i].Prog.Probe.NewestFirst() {
			order(i)
		}
	}
	var waves [][]int
	for i, r := range rank {
		for len(waves) <= r {
			waves = append(waves, nil)
		}
		waves[r] = append(waves[r], i)
	}
	return waves
}

// attachPid is the process p attaches to: -p's, or for probes that
// attach to each thread of a process (watchpoints), the -c command's;
// 0 for all.
func (r *run) attachPid(p *probe.Probe) int {
	if r.opts.Pid == 0 && p.PerTask() {
		return r.opts.Cpid
	}
	return r.opts.Pid
}

// eventNames names the events p attaches to: a multi-probe's are its
// functions' own probes.
func eventNames(p *probe.Probe) []string {
	if p.Funcs == nil {
		return []string{p.Name}
	}
	names := make([]string, len(p.Funcs))
	for i := range p.Funcs {
		_, names[i] = p.FuncName(i)
	}
	return names
}

package probe

import (
	"fmt"
	"gtrace/lang/builtin"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
)

func init() {
	register(&provider{kind: Tracepoint, names: []string{"tracepoint", "t"},
		progType: ebpf.TracePoint, context: Record, builtins: []builtin.Var{builtin.Args},
		parse: parseTracepoint, attach: attachTracepoint,
		list: &listing{qualified: true,
			probes: func(*lister) ([]string, error) { return kernel.Tracepoints() },
			params: func(_ *lister, tp string) ([]string, error) {
				category, event, _ := strings.Cut(tp, ":")
				return kernel.TracepointParams(category, event)
			}}})
}

func parseTracepoint(parts []string, _ *Env) ([]Probe, error) {
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return nil, fmt.Errorf("tracepoint probe must have the form tracepoint:category:event")
	}
	pattern := parts[0] + ":" + parts[1]
	names, err := kernel.ExpandTracepoints(pattern)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 && !kernel.HasWildcard(pattern) {
		return nil, &MissingError{Provider: "tracepoint", Target: pattern, Reason: "tracepoint not found: " + pattern}
	}
	probes := make([]Probe, 0, len(names))
	for _, n := range names {
		cat, ev, _ := strings.Cut(n, ":")
		probes = append(probes, Probe{Kind: Tracepoint, Name: "tracepoint:" + n, Target: cat, Event: ev,
			Fused: syscallOf(cat, ev)})
	}
	return probes, nil
}

// syscallOf returns the system call of a syscall tracepoint that can run
// fused into raw_syscalls, or nil. The checker decides whether it does
// (sema.Options.NoFusion).
//
// Each syscall tracepoint is its own perf event, and closing one waits
// for RCU grace periods: detaching all 720 takes 25 to 46 s here. All of
// them are views of raw_syscalls:sys_enter and sys_exit filtered by
// syscall number, so a dispatcher on those two raw tracepoints tail-calls
// each fused probe's program by number instead: two links for any number
// of syscall probes. The dispatchers ignore ia32 system calls, as the
// syscall tracepoints do (codegen/syscalls.go).
func syscallOf(category, event string) *Syscall {
	if category != "syscalls" {
		return nil
	}
	name, ok := strings.CutPrefix(event, "sys_enter_")
	exit := false
	if !ok {
		name, ok = strings.CutPrefix(event, "sys_exit_")
		exit = true
	}
	nr, known := kernel.SyscallNumber(name)
	if !ok || !known {
		return nil
	}
	return &Syscall{Nr: nr, Exit: exit}
}

func attachTracepoint(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.Tracepoint(p.Target, p.Event, prog, nil)
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

package probe

import (
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/kernel"
)

func init() {
	register(&provider{kind: Tracepoint, names: []string{"tracepoint", "t"},
		progType: ebpf.TracePoint, parse: parseTracepoint, attach: attachTracepoint})
}

func parseTracepoint(parts []string) ([]Probe, error) {
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
			Syscall: syscallOf(cat, ev)})
	}
	return probes, nil
}

// syscallOf returns the syscall number plus one of a syscall tracepoint
// that can run fused into raw_syscalls, or 0.
//
// Each syscall tracepoint is its own perf event, and closing one waits
// for RCU grace periods: detaching all 720 takes 25 to 46 s here. All of
// them are views of raw_syscalls:sys_enter and sys_exit filtered by
// syscall number, so a dispatcher on those two raw tracepoints tail-calls
// each fused probe's program by number instead: two links for any number
// of syscall probes. The dispatchers ignore ia32 system calls, as the
// syscall tracepoints do (codegen/syscalls.go).
func syscallOf(category, event string) int {
	if category != "syscalls" || !fuseSyscalls {
		return 0
	}
	name, ok := strings.CutPrefix(event, "sys_enter_")
	if !ok {
		name, ok = strings.CutPrefix(event, "sys_exit_")
	}
	nr, known := kernel.SyscallNumber(name)
	if !ok || !known {
		return 0
	}
	return nr + 1
}

// fuseSyscalls turns syscall tracepoint fusion on; tests turn it off to
// compare with the tracepoints themselves.
var fuseSyscalls = os.Getenv("GTRACE_NO_FUSION") == ""

func attachTracepoint(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	l, err := link.Tracepoint(p.Target, p.Event, prog, nil)
	if err != nil {
		return nil, err
	}
	return []link.Link{l}, nil
}

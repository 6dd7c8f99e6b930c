package probe

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/lang/builtin"
	"gtrace/symbol"
)

// Kind is the provider of a probe.
type Kind int

// The providers.
const (
	Begin Kind = iota
	End
	Tracepoint
	RawTracepoint
	Interval
	Profile
	Software
	Hardware
	Kprobe
	Kretprobe
	Fentry
	Fexit
	Uprobe
	Uretprobe
	Usdt
	Self
	Watchpoint
	Bench
	Test
	Iter
)

// Probe is one concrete attach point after alias resolution and wildcard
// expansion.
type Probe struct {
	Kind Kind
	// Name is the canonical spelling, as the probe builtin returns it,
	// such as "tracepoint:syscalls:sys_enter_read" or "interval:s:1".
	Name string
	// Target and Event name what to attach to: a tracepoint's category
	// and event, a raw tracepoint's name (Event), a perf event's name, a
	// watchpoint's mode ("rw", "w" or "x").
	Target, Event string
	// Period is the perf sample period: nanoseconds for interval and
	// profile in time units, events for software and hardware.
	// Freq, when set, is a sampling frequency in Hz instead.
	Period, Freq uint64
	// Offset is a kprobe's or uprobe's offset into its function.
	Offset uint64
	// Length is how many bytes a watchpoint watches.
	Length uint64
	// Address is a uprobe's virtual address in its binary, instead of
	// a function name, or the address a watchpoint watches.
	Address uint64
	// Unsafe is set on a uprobe made with --unsafe: its place is not
	// checked to be inside a function.
	Unsafe bool
	// USDT is a usdt probe's site: where it is, its semaphore, how to
	// read its arguments. Target is its binary.
	USDT *symbol.USDT
	// Funcs lists the functions of a kprobe wildcard attached as one
	// multi-kprobe; nil for a probe on one function.
	Funcs []string
	// Pin is where an iterator's link is pinned instead of read: a
	// path, relative to /sys/fs/bpf unless absolute.
	Pin string
	// Fused is set on a syscall tracepoint that runs fused into
	// raw_syscalls, from a dispatcher that calls it by number.
	Fused *Syscall
}

// Syscall is the system call a fused syscall tracepoint runs for.
type Syscall struct {
	Nr   int
	Exit bool // sys_exit_*, not sys_enter_*
}

// UserSpace reports whether attaching p writes breakpoints into the
// processes that map its binary: uprobes and USDT probes.
func (p *Probe) UserSpace() bool { return providers[p.Kind].userSpace }

// PerTask reports whether p attaches to each thread of the traced
// process, the -c command's as well as -p's: watchpoints.
func (p *Probe) PerTask() bool { return providers[p.Kind].perTask }

// NewestFirst reports whether the kernel runs the programs on p's event
// newest first, not in the order they were attached: kprobes (not
// kretprobes), uprobes, uretprobes, usdt probes, fentry and fexit, as
// bpftrace finds.
func (p *Probe) NewestFirst() bool { return providers[p.Kind].newestFirst }

// Attached reports whether p is attached to an event, rather than run by
// gtrace itself (BEGIN, END, self).
func (p *Probe) Attached() bool { return providers[p.Kind].attach != nil }

// Context is what p's programs receive as their context, and so how
// their builtins read the traced values.
func (p *Probe) Context() Context {
	if p.Fused != nil {
		return SyscallArgs
	}
	return providers[p.Kind].context
}

// Offers reports whether p's programs can read the context builtin b,
// such as args or retval.
func (p *Probe) Offers(b builtin.Var) bool {
	return slices.Contains(providers[p.Kind].builtins, b)
}

// ProgramType is the BPF program type that runs p.
func (p *Probe) ProgramType() ebpf.ProgramType {
	if p.Fused != nil {
		return ebpf.RawTracepoint
	}
	return providers[p.Kind].progType
}

// AttachType is the attach type p's program is loaded with, for programs
// bound to their target at load time (fentry, fexit) and multi-kprobes;
// 0 otherwise.
func (p *Probe) AttachType() ebpf.AttachType {
	if p.Funcs != nil {
		return ebpf.AttachTraceKprobeMulti
	}
	return providers[p.Kind].attachType
}

// provider describes one kind of attach point. All that gtrace knows
// of a kind is in its provider's file, in the value it registers.
type provider struct {
	kind       Kind
	names      []string // canonical name first, then aliases
	progType   ebpf.ProgramType
	attachType ebpf.AttachType
	// context is what its programs receive.
	context Context
	// builtins lists the context builtins its programs can read.
	builtins []builtin.Var
	// userSpace providers attach to the processes of a binary.
	userSpace bool
	// perTask providers attach to the threads of the -c command too.
	perTask bool
	// newestFirst providers' events run the program attached last
	// first.
	newestFirst bool
	// list lists its probes for -l; nil for providers that list none.
	list *listing
	// parse turns the parts after the provider name into probes; a
	// wildcard may expand to several.
	parse func(parts []string, env *Env) ([]Probe, error)
	// attach attaches prog to p; nil for probes that are run, not
	// attached (BEGIN and END).
	attach func(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error)
}

// providers lists every provider gtrace knows.
var providers = map[Kind]*provider{}

func register(p *provider) { providers[p.kind] = p }

// Kinds lists every kind of probe, in the order of their constants.
func Kinds() []Kind {
	kinds := make([]Kind, 0, len(providers))
	for k := range providers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// String is the kind's provider name, as attach points spell it.
func (k Kind) String() string {
	if p, ok := providers[k]; ok {
		return p.names[0]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Env is what resolving an attach point knows beyond its text.
type Env struct {
	// Pid is the process of -p, 0 for none. A user-space probe then
	// finds its binary in the process's mount namespace, and may leave
	// it out, or give a wildcard, for every file the process maps.
	Pid int
	// Unsafe is --unsafe: a uprobe may go where gtrace cannot check
	// that it starts an instruction, or into a file that is not ELF.
	Unsafe bool
}

// Parse resolves one attach point as written in a script into the probes it
// names. The error says what is wrong in words suitable for the user.
func Parse(text string) ([]Probe, error) {
	return (&Env{}).Parse(text)
}

// Parse is Parse in env.
func (env *Env) Parse(text string) ([]Probe, error) {
	parts := splitParts(text)
	name := parts[0]
	for _, pr := range providers {
		for _, n := range pr.names {
			if n == name {
				probes, err := pr.parse(parts[1:], env)
				if err != nil {
					return nil, err
				}
				return probes, nil
			}
		}
	}
	return nil, fmt.Errorf("invalid probe type: %s", name)
}

// splitParts splits an attach point on ':' outside double quotes and
// unquotes the parts: in quotes, a backslash takes the next character as
// it is, so that usdt:bin:p:"\"name\"" names the probe "name".
func splitParts(text string) []string {
	var parts []string
	var cur strings.Builder
	quoted, escaped := false, false
	for _, c := range text {
		switch {
		case escaped:
			cur.WriteRune(c)
			escaped = false
		case c == '\\' && quoted:
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == ':' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(c)
		}
	}
	return append(parts, cur.String())
}

// EmptyError is returned for an attach point that is valid but stands
// for no probe at all, such as a function of a stub library: a warning,
// not an error.
type EmptyError struct{ Reason string }

func (e *EmptyError) Error() string { return e.Reason }

// MissingError is returned for an attach point that names what does not
// exist, such as a function a binary lacks or a tracepoint the kernel
// does not have: an error, a warning or nothing, as the missing_probes
// config says.
type MissingError struct {
	Provider string // as bpftrace names it in its warning: "uprobe"
	Target   string // "/usr/lib/libc.so.6:no_such_function"
	Reason   string
	// Hint, when set, is a sentence on why it may be missing, such as
	// that the binary is stripped.
	Hint string
}

func (e *MissingError) Error() string { return e.Reason }

// Message is the error as bpftrace words it: "No matches for uprobe
// /bin/bash:nosuch.", and the hint.
func (e *MissingError) Message() string {
	msg := "No matches for " + e.Provider + " " + e.Target + "."
	if e.Hint != "" {
		msg += " " + e.Hint
	}
	return msg
}

// Attach attaches prog to p. The returned links detach when closed, and
// when the process dies, so nothing is left behind. pid, when not 0,
// limits user-space probes to that process (-p, -c).
func Attach(p *Probe, prog *ebpf.Program, pid int) ([]link.Link, error) {
	pr := providers[p.Kind]
	if pr.attach == nil {
		return nil, fmt.Errorf("%s probes are run, not attached", p.Name)
	}
	links, err := pr.attach(p, prog, pid)
	if err != nil {
		return nil, &AttachError{Probe: p.Name, Err: err}
	}
	return links, nil
}

// AttachError is the failure to attach one probe, named as the probe
// builtin names it, so that the command line can point at its attach
// point.
type AttachError struct {
	Probe string
	Err   error
}

func (e *AttachError) Error() string { return "attach " + e.Probe + ": " + e.Err.Error() }

func (e *AttachError) Unwrap() error { return e.Err }

// Unable is bpftrace's report of the failure, which stops the run:
// "Unable to attach probe: NAME. ...". Err says why.
func (e *AttachError) Unable() string {
	return "Unable to attach probe: " + e.Probe + ". If this is expected, set the 'missing_probes' config variable to 'warn'."
}

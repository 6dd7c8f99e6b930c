package tools

import (
	"fmt"
	"slices"
	"strings"
)

// Flag is one of BCC's short flags and the program option it sets.
type Flag struct {
	Short  string // "-D"
	Option string // the getopt() name it sets: "disks"
	// Value names the flag's value, "" for a switch.
	Value string
	// Tools are the tools the entry is restricted to, none for every
	// tool: where BCC gives a letter another meaning in some tools, their
	// own entry wins over the general one.
	Tools []string
}

// The tools that share BCC's trace-pattern flags, and those that print
// stacks.
var (
	patternTools = []string{"funccount", "funclatency", "stackcount"}
	stackTools   = []string{"stackcount", "profile", "offcputime"}
)

// Flags are BCC's short flags: a tool accepts those whose options its
// script reads, or that the frame handles for it (frameOptions).
var Flags = []Flag{
	{"-p", "pid", "PID", nil},
	{"-d", "disk", "DISK", nil},
	{"-d", "duration", "DURATION", []string{"funccount", "funclatency"}},
	{"-D", "duration", "DURATION", []string{"stackcount"}},
	{"-i", "interval", "INTERVAL", nil},
	{"-D", "disks", "", nil},
	{"-F", "flags", "", nil},
	{"-F", "per_function", "", []string{"funclatency"}},
	{"-F", "frequency", "HZ", []string{"profile"}},
	{"-Q", "queued", "", nil},
	{"-m", "milliseconds", "", nil},
	{"-u", "microseconds", "", nil},
	{"-m", "min_block", "MIN_BLOCK_TIME", []string{"offcputime"}},
	{"-M", "max_block", "MAX_BLOCK_TIME", []string{"offcputime"}},
	{"-T", "timestamp", "", nil},
	{"-U", "user", "", nil},
	{"-K", "kernel", "", nil},
	{"-f", foldedOption, "", stackTools},
	{"-r", regexpOption, "", patternTools},
	{"-P", "pids", "", nil},
	{"-L", "latency", "", nil},
	{"-t", "elapsed", "", nil},
	{"-x", "failed", "", nil},
	{"-e", "errno", "ERRNO", nil},
	{"-n", "name", "NAME", nil},
	{"-l", "line", "LINE", nil},
	{"-C", "counts", "", nil},
	{"-N", "nanoseconds", "", nil},
	{"-T", "top", "TOP", []string{"syscount", "argdist"}},
	{"-C", countSpecifier, "SPECIFIER", []string{"argdist"}},
	{"-H", histSpecifier, "SPECIFIER", []string{"argdist"}},
	{"-n", "count", "COUNT", []string{"argdist"}},
	{"-L", "tids", "", []string{"runqlat"}},
	{"-P", "port", "PORT", []string{"tcpconnect"}},
	{"-d", "dist", "", []string{"hardirqs", "softirqs"}},
	{"-P", "pattern", "", []string{"biosnoop"}},
	{"-C", "noclear", "", []string{"biotop"}},
	{"-r", "maxrows", "ROWS", []string{"biotop"}},
}

// The options the frame handles itself rather than the script: folded
// asks for gtrace's -f folded, regexp reads a pattern argument as a
// regular expression.
const (
	foldedOption = "folded"
	regexpOption = "regexp"
)

// frameOptions describe the options the frame handles, for -h.
var frameOptions = map[string]string{
	foldedOption: "print folded stacks, as gtrace's -f folded",
	regexpOption: "the pattern is a regular expression",
}

// Interval and count are the options the positional INTERVAL and COUNT
// set, in a tool that declares no arguments of its own.
const (
	intervalOption = "interval"
	countOption    = "count"
)

// flagsFor are the entries of Flags for the tool called name: its own,
// and the general ones for the letters it has none of.
func flagsFor(name string) []Flag {
	var own, general []Flag
	for _, f := range Flags {
		switch {
		case slices.Contains(f.Tools, name):
			own = append(own, f)
		case f.Tools == nil:
			general = append(general, f)
		}
	}
	for _, f := range general {
		if !slices.ContainsFunc(own, func(o Flag) bool { return o.Short == f.Short }) {
			own = append(own, f)
		}
	}
	return own
}

// Run is how a tool's command line asks it to run.
type Run struct {
	// Named are the program options, as after bpftrace's --: name, or
	// name=value.
	Named []string
	// Params are the positional parameters, $1, $2, ...: the tool's
	// arguments, a probe pattern translated into attach points.
	Params []string
	// Macros are the bodies the frame writes into the script's macros
	// of those names, from an argdist specifier.
	Macros map[string]string
	// Format is gtrace's -f: "json" for -j, "folded" for -f where it
	// folds; "" for text.
	Format string
	// FlameGraph and Pprof are the files of gtrace's --flamegraph and
	// --pprof, Command a command to run and trace until it exits (-c),
	// Help asks for the usage.
	FlameGraph, Pprof string
	Command           string
	Help              bool
	// Container holds gtrace's container filters, each flag followed by
	// its value: --cgroup PATH, --pod UID, --container ID, --pidns INODE.
	Container []string
}

// ContainerFlags are gtrace's flags that trace one container, which
// every tool takes, each with a value.
var ContainerFlags = []struct{ Flag, Value, Description string }{
	{"--cgroup", "PATH", "trace only the tasks in cgroup v2 PATH and below it"},
	{"--pod", "UID", "trace only the containers of Kubernetes pod UID"},
	{"--container", "ID", "with --pod, only its container whose id starts with ID"},
	{"--pidns", "INODE", "trace only the tasks in PID namespace INODE"},
}

// containerFlag says whether a is one of ContainerFlags.
func containerFlag(a string) bool {
	return slices.ContainsFunc(ContainerFlags, func(f struct{ Flag, Value, Description string }) bool { return f.Flag == a })
}

// ParseArgs reads a tool's command line, everything after its name:
// BCC's flags, --NAME[=VALUE] for any option, and the tool's arguments,
// or INTERVAL and COUNT.
func (t *Tool) ParseArgs(args []string) (*Run, error) {
	r := &Run{}
	var positional []string
	regexp := false
	flagged := map[string]string{} // arguments given by a flag
	for i := 0; i < len(args); i++ {
		a := args[i]
		var named []string
		switch {
		case a == "-h" || a == "--help":
			r.Help = true
		case a == "-j" || a == "--json":
			r.Format = "json"
		case a == "-c" || t.folds() && (a == "--flamegraph" || a == "--pprof"):
			if i+1 >= len(args) {
				what := "FILE"
				if a == "-c" {
					what = "command"
				}
				return nil, t.usageError("%s needs a %s", a, what)
			}
			i++
			switch a {
			case "-c":
				r.Command = args[i]
			case "--flamegraph":
				r.FlameGraph = args[i]
			default:
				r.Pprof = args[i]
			}
		case containerFlag(a):
			if i+1 >= len(args) {
				return nil, t.usageError("%s needs a value", a)
			}
			i++
			r.Container = append(r.Container, a, args[i])
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			if !t.accepts(name) {
				return nil, t.usageError("unknown option %s", a)
			}
			named = []string{a[2:]}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			var used int
			var err error
			if named, used, err = t.shortFlags(a, args[i+1:]); err != nil {
				return nil, err
			}
			i += used
		default:
			positional = append(positional, a)
		}
		for _, n := range named {
			name, value, _ := strings.Cut(n, "=")
			switch {
			case n == foldedOption:
				r.Format = "folded"
			case n == regexpOption:
				regexp = true
			case t.argument(name) != nil:
				if _, twice := flagged[name]; twice {
					return nil, t.usageError("%s is given twice", t.spelling(Option{Name: name}, false))
				}
				flagged[name] = value
			default:
				r.Named = append(r.Named, n)
			}
		}
	}
	if r.Help {
		return r, nil
	}
	if len(t.Arguments) > 0 {
		return r, t.bindArguments(r, positional, flagged, regexp)
	}
	if len(positional) > 0 {
		names := []string{intervalOption, countOption}
		if _, ok := t.option(intervalOption); !ok || len(positional) > len(names) {
			return nil, t.usageError("unexpected argument %s", positional[len(positional)-1])
		}
		for i, p := range positional {
			if !isCount(p) {
				return nil, t.usageError("%s must be a positive number, got %q", strings.ToUpper(names[i]), p)
			}
			r.Named = append(r.Named, names[i]+"="+p)
		}
	}
	return r, nil
}

// bindArguments binds the tool's declared arguments, in order, each
// given by a flag (flagged), in its place among the positional ones, or
// by its default: one the script reads as an option sets it, as
// INTERVAL does, a probe pattern becomes attach points, and any other is
// the next positional parameter.
func (t *Tool) bindArguments(r *Run, positional []string, flagged map[string]string, regexp bool) error {
	inPlace := t.positionalArguments()
	if len(positional) > len(inPlace) {
		return t.usageError("unexpected argument %s", positional[len(inPlace)])
	}
	for i, p := range positional {
		flagged[inPlace[i].Name] = p
	}
	for _, a := range t.Arguments {
		p, ok := flagged[a.Name]
		switch {
		case ok:
		case a.Default != "":
			p = a.Default
		case a.Optional:
			continue
		default:
			return t.usageError("needs a %s", strings.ToUpper(a.Name))
		}
		if _, ok := t.option(a.Name); ok {
			if !isCount(p) {
				return t.usageError("%s must be a positive number, got %q", strings.ToUpper(a.Name), p)
			}
			r.Named = append(r.Named, a.Name+"="+p)
			continue
		}
		if a.Name == countSpecifier || a.Name == histSpecifier {
			if r.Macros != nil {
				return t.usageError("takes one specifier, to -C or -H")
			}
			s, err := ParseSpecifier(p, a.Name == histSpecifier)
			if err != nil {
				return t.usageError("%v", err)
			}
			r.Params = append(r.Params, s.Attach)
			r.Macros = s.Macros
			continue
		}
		if a.Name != patternArgument && a.Name != functionArgument {
			r.Params = append(r.Params, p)
			continue
		}
		entry, ret, err := AttachPoint(p, regexp)
		if err != nil {
			return t.usageError("%v", err)
		}
		r.Params = append(r.Params, entry)
		if a.Name == functionArgument {
			if ret == "" {
				return t.usageError("%s has no return to time: give a function", p)
			}
			r.Params = append(r.Params, ret)
		}
	}
	if t.argument(countSpecifier) != nil && r.Macros == nil {
		return t.usageError("needs a specifier, to -C or -H")
	}
	return nil
}

// shortFlags reads one argument of short flags: -D, -DQ, -p 123 or
// -p123. used counts the arguments of rest taken as a value.
func (t *Tool) shortFlags(a string, rest []string) (named []string, used int, err error) {
	for j := 1; j < len(a); j++ {
		f, ok := t.flag("-" + a[j:j+1])
		if !ok {
			return nil, 0, t.usageError("unknown flag -%s", a[j:j+1])
		}
		if f.Value == "" {
			named = append(named, f.Option)
			continue
		}
		value := a[j+1:]
		if value == "" {
			if len(rest) == 0 {
				return nil, 0, t.usageError("%s needs a %s", f.Short, f.Value)
			}
			value, used = rest[0], 1
		}
		return append(named, f.Option+"="+value), used, nil
	}
	return named, 0, nil
}

// flag finds the short flag s among those the tool accepts.
func (t *Tool) flag(s string) (Flag, bool) {
	for _, f := range flagsFor(t.Name) {
		if f.Short == s && t.accepts(f.Option) {
			return f, true
		}
	}
	return Flag{}, false
}

// accepts says whether the tool takes the option called name: one its
// script reads, one of its arguments, or one the frame handles for it.
func (t *Tool) accepts(name string) bool {
	if t.argument(name) != nil {
		return true
	}
	if _, ok := frameOptions[name]; ok {
		return slices.ContainsFunc(flagsFor(t.Name), func(f Flag) bool { return f.Option == name })
	}
	_, ok := t.option(name)
	return ok
}

// folds says whether the tool prints stacks that fold: it takes -f
// folded, and so gtrace's --flamegraph and --pprof.
func (t *Tool) folds() bool {
	return t.accepts(foldedOption)
}

// usageError is a command-line error followed by the usage line.
func (t *Tool) usageError(format string, args ...any) error {
	return fmt.Errorf("%s: %s\n%s", t.Name, fmt.Sprintf(format, args...), t.UsageLine())
}

// positionalArguments are the tool's arguments given in their place on
// the command line: those no flag gives.
func (t *Tool) positionalArguments() []Argument {
	var in []Argument
	for _, a := range t.Arguments {
		if !slices.ContainsFunc(flagsFor(t.Name), func(f Flag) bool { return f.Option == a.Name }) {
			in = append(in, a)
		}
	}
	return in
}

// argument finds the tool's argument called name.
func (t *Tool) argument(name string) *Argument {
	for i := range t.Arguments {
		if t.Arguments[i].Name == name {
			return &t.Arguments[i]
		}
	}
	return nil
}

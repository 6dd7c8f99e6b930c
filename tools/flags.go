package tools

import (
	"fmt"
	"strings"
)

// Flag is one of BCC's short flags and the program option it sets.
type Flag struct {
	Short  string // "-D"
	Option string // the getopt() name it sets: "disks"
	// Value names the flag's value, "" for a switch.
	Value string
}

// Flags are BCC's short flags, the same for every tool that reads the
// option: a tool accepts those whose options its script reads.
var Flags = []Flag{
	{"-p", "pid", "PID"},
	{"-d", "disk", "DISK"},
	{"-D", "disks", ""},
	{"-F", "flags", ""},
	{"-Q", "queued", ""},
	{"-m", "milliseconds", ""},
	{"-u", "microseconds", ""},
	{"-T", "timestamp", ""},
	{"-P", "pattern", ""},
	{"-C", "noclear", ""},
	{"-r", "maxrows", "ROWS"},
}

// Interval and count are the options the positional INTERVAL and COUNT
// set.
const (
	intervalOption = "interval"
	countOption    = "count"
)

// Run is how a tool's command line asks it to run.
type Run struct {
	// Named are the program options, as after bpftrace's --: name, or
	// name=value.
	Named []string
	// JSON asks for bpftrace's -f json output, Command for a command
	// to run and trace until it exits (-c), Help for the usage.
	JSON    bool
	Command string
	Help    bool
}

// ParseArgs reads a tool's command line, everything after its name:
// BCC's flags, --NAME[=VALUE] for any option, and INTERVAL and COUNT.
func (t *Tool) ParseArgs(args []string) (*Run, error) {
	r := &Run{}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help":
			r.Help = true
		case a == "-j" || a == "--json":
			r.JSON = true
		case a == "-c":
			if i+1 >= len(args) {
				return nil, t.usageError("-c needs a command")
			}
			i++
			r.Command = args[i]
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			if _, ok := t.option(name); !ok {
				return nil, t.usageError("unknown option %s", a)
			}
			r.Named = append(r.Named, a[2:])
		case strings.HasPrefix(a, "-") && len(a) > 1:
			named, used, err := t.shortFlags(a, args[i+1:])
			if err != nil {
				return nil, err
			}
			r.Named = append(r.Named, named...)
			i += used
		default:
			positional = append(positional, a)
		}
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
	for _, f := range Flags {
		if _, ok := t.option(f.Option); ok && f.Short == s {
			return f, true
		}
	}
	return Flag{}, false
}

// usageError is a command-line error followed by the usage line.
func (t *Tool) usageError(format string, args ...any) error {
	return fmt.Errorf("%s: %s\n%s", t.Name, fmt.Sprintf(format, args...), t.UsageLine())
}

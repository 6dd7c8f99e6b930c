package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// shortFlags are bpftrace's one-letter options that take no value, and
// shortValued those that do, as its getopt string gives them.
const (
	shortFlags  = "bhklqvV"
	shortValued = "BcdefIop"
)

// longValued are the long options that take a value.
var longValued = map[string]bool{
	"--cmd": true, "--debug": true, "--debuginfo": true, "--dwarf-pid": true, "--emit-elf": true,
	"--include": true, "--mode": true, "--no-feature": true, "--output": true,
	"--pid": true, "--probe-filter": true,
}

// splitArgs spells the arguments one option each, as getopt reads them:
// "-qk" is "-q -k", "-p42" is "-p 42" and "--pid=42" is "--pid 42".
// An option's value, and the arguments after "--", are left as they are.
func splitArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case takesValue(a) && i+1 < len(args):
			out = append(out, a, args[i+1])
			i++
		case strings.HasPrefix(a, "--"):
			if name, value, ok := strings.Cut(a, "="); ok && longValued[name] {
				out = append(out, name, value)
				continue
			}
			out = append(out, a)
		case len(a) > 2 && a[0] == '-' && a != "-dd":
			out = append(out, splitShort(a)...)
		default:
			out = append(out, a)
		}
	}
	return out
}

// takesValue reports whether a is an option whose value is the next
// argument.
func takesValue(a string) bool {
	return longValued[a] || len(a) == 2 && a[0] == '-' && strings.IndexByte(shortValued, a[1]) >= 0
}

// splitShort splits one argument of short options; one that getopt
// would refuse is left whole, for the caller's error.
func splitShort(a string) []string {
	var out []string
	for i := 1; i < len(a); i++ {
		c := a[i]
		switch {
		case strings.IndexByte(shortValued, c) >= 0:
			out = append(out, "-"+string(c))
			if i+1 < len(a) {
				out = append(out, a[i+1:])
			}
			return out
		case strings.IndexByte(shortFlags, c) >= 0:
			out = append(out, "-"+string(c))
		default:
			return []string{a}
		}
	}
	return out
}

// maxPid is the nominal largest pid of a 64-bit system, against which
// bpftrace checks -p.
const maxPid = 0x400000

// plainError is a command-line error that bpftrace prints without the
// usage text.
type plainError struct{ error }

// parsePid reads the -p value as bpftrace does, with its messages.
func parsePid(s string) (int, error) {
	digits := strings.ReplaceAll(s, "_", "")
	end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(digits)
	}
	if end == 0 {
		return 0, plainError{fmt.Errorf("Failed to parse pid: invalid integer: %s", s)}
	}
	n, err := strconv.ParseUint(digits[:end], 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, plainError{fmt.Errorf("Failed to parse pid: overflow error, maximum value is %d: %s", uint64(1<<64-1), s)}
	case end < len(digits):
		return 0, plainError{fmt.Errorf("Failed to parse pid: invalid trailing bytes: %s", s)}
	case n > maxPid:
		return 0, plainError{fmt.Errorf("Pid out of range: %d", n)}
	case n == 0:
		return 0, plainError{errors.New("Failed to attach to pid: pid 0 is not a process")}
	}
	return int(n), nil
}

// parseBuffering reads -B, how the output is buffered.
func parseBuffering(s string) (string, error) {
	switch s {
	case "line", "full", "none":
		return s, nil
	}
	return "", plainError{errors.New("USAGE: -B must be either 'line', 'full', or 'none'.")}
}

// noFeatures are the kernel features --no-feature turns off.
var noFeatures = []string{"kprobe_multi", "kprobe_session", "uprobe_multi"}

// parseNoFeature reads --no-feature, a comma separated list.
func parseNoFeature(s string, into map[string]bool) error {
	for _, f := range strings.Split(s, ",") {
		if !slices.Contains(noFeatures, f) {
			return plainError{fmt.Errorf("USAGE: --no-feature can only have values '%s'.", strings.Join(noFeatures, ","))}
		}
		into[f] = true
	}
	return nil
}

// parseProbeFilter compiles --probe-filter's regular expression, which
// a probe's name must match somewhere for the probe to run.
func parseProbeFilter(s string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, plainError{fmt.Errorf("Invalid --probe-filter regex '%s': %v", s, err)}
	}
	return re, nil
}

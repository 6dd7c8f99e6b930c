package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"gtrace/sema"
)

// splitProgramArgs adds the arguments after -- to params: --NAME and
// --NAME=VALUE are program options, which getopt() reads, and come back
// without their dashes; the others are positional parameters.
func splitProgramArgs(params, args []string) (positional, named []string) {
	for _, a := range args {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			named = append(named, name)
		} else {
			params = append(params, a)
		}
	}
	return params, named
}

// programOptionsOK checks the program options given against those the
// script reads with getopt(), as bpftrace does once it has compiled the
// script: an unexpected one is an error, --help lists them all with their
// descriptions. Both print a hint of the expected options and fail.
func programOptionsOK(opts map[string]*sema.ProgramOption, named []string, stderr io.Writer) bool {
	var unexpected []string
	help := false
	for _, n := range named {
		name, _, _ := strings.Cut(n, "=")
		switch {
		case name == "help":
			help = true
		case opts[name] == nil:
			unexpected = append(unexpected, "--"+name)
		}
	}
	if len(unexpected) == 0 && !help {
		return true
	}
	if len(unexpected) > 0 {
		fmt.Fprintf(stderr, "ERROR: unexpected program command line options: %s\n", strings.Join(unexpected, ", "))
	}
	if len(opts) == 0 {
		fmt.Fprintln(stderr, "HINT: no custom program options defined.")
		return false
	}
	var list []string
	for _, name := range slices.Sorted(maps.Keys(opts)) {
		s := "--" + name
		if d := opts[name].Description; help && d != "" {
			s += ": " + d
		}
		list = append(list, s)
	}
	if help {
		fmt.Fprintf(stderr, "HINT: expected program options:\n%s\n", strings.Join(list, "\n"))
	} else {
		fmt.Fprintf(stderr, "HINT: expected program options: %s\n", strings.Join(list, ", "))
	}
	return false
}

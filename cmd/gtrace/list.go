package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"gtrace/compiler"
	"gtrace/probe"
)

// listOperand reads -l's one operand as bpftrace does: a file that
// exists is a script whose probes to list, anything else a pattern.
func (o *options) listOperand(args []string) error {
	switch {
	case len(args) > 1:
		return fmt.Errorf("USAGE: -l takes one search pattern or script, got %d arguments", len(args))
	case len(args) == 0:
		return nil
	}
	if _, err := os.Stat(args[0]); err == nil && o.program == "" && o.filename == "" {
		o.filename = args[0]
	} else {
		o.listPattern = args[0]
	}
	return nil
}

// list prints the probes -l asks for: those of the script, or those
// matching the pattern.
func list(o *options, stdout, stderr io.Writer) int {
	if o.program != "" || o.filename != "" {
		return listScript(o, stdout, stderr)
	}
	pat := o.listPattern
	if strings.Contains(pat, ".") && !strings.ContainsAny(pat, ":*") {
		fmt.Fprintf(stderr, "WARNING: It appears that '%s' is a filename but the file does not exist. Treating '%s' as a search pattern.\n", pat, pat)
	}
	lines, err := probe.List(pat, probe.ListOptions{Verbose: o.listVerbose, Pid: o.pid})
	return printListing(lines, err, stdout, stderr)
}

// printListing prints the lines of a listing, or why there are none.
func printListing(lines []string, err error, stdout, stderr io.Writer) int {
	if errors.Is(err, fs.ErrPermission) {
		fmt.Fprintf(stderr, "ERROR: %v: listing probes reads tracefs, which only root may read here\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	// A full listing is some 200000 lines: one write each would take
	// longer than finding them.
	w := bufio.NewWriterSize(stdout, 64<<10)
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// listScript lists the probes of the script given with -e or as a file,
// as bpftrace -l does: parsed, not checked.
func listScript(o *options, stdout, stderr io.Writer) int {
	name, src, err := readScript(o)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	aps, err := compiler.AttachPoints(src, &compiler.Options{Name: name, IncludeDirs: o.includeDirs, Includes: o.includes})
	if err != nil {
		if ec, ok := rendered(stderr, err).(exitCode); ok {
			return int(ec)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	lines, err := probe.ListScript(aps, probe.ListOptions{Verbose: o.listVerbose, Pid: o.pid})
	return printListing(lines, err, stdout, stderr)
}

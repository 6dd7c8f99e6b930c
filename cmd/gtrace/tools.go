package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gtrace/tools"
)

const toolsUsage = `USAGE:
    gtrace tools                    list the tools
    gtrace tools NAME [FLAGS] [ARGUMENTS]
                                    run a tool; NAME -h for its usage
    gtrace tools show NAME          print a tool's script
    gtrace tools --markdown         the list as the README shows it

A link named after a tool runs it: ln -s gtrace biolatency; biolatency -D 1 5
`

// toolsCmd runs `gtrace tools ...`.
func toolsCmd(args []string, stdout, stderr io.Writer) int {
	all, err := tools.All()
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	switch {
	case len(args) == 0:
		if err := tools.WriteList(stdout, all); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 1
		}
		return 0
	case args[0] == "-h" || args[0] == "--help":
		fmt.Fprint(stdout, toolsUsage)
		return 0
	case args[0] == "--markdown":
		if err := tools.WriteMarkdown(stdout, all); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 1
		}
		return 0
	case args[0] == "show":
		if len(args) != 2 {
			fmt.Fprintf(stderr, "ERROR: show needs one tool's name\n\n%s", toolsUsage)
			return 1
		}
		t, err := tools.Lookup(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 1
		}
		stdout.Write(t.Source)
		return 0
	}
	return runTool(args[0], args[1:], stdout, stderr)
}

// runTool runs the tool name with its command line.
func runTool(name string, args []string, stdout, stderr io.Writer) int {
	t, err := tools.Lookup(name)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	r, err := t.ParseArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if r.Help {
		if err := t.WriteHelp(stdout); err != nil {
			return 1
		}
		return 0
	}
	if r.FlameGraph != "" {
		if err := flameGraphExt(r.FlameGraph); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 2
		}
	}
	src, err := t.Script(r)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	o := &options{filename: t.Name + ".bt", source: src, named: r.Named, params: r.Params,
		command: r.Command, format: "text", flameGraph: r.FlameGraph, pprofFile: r.Pprof, quiet: true}
	if r.Format != "" {
		o.format = r.Format
	}
	for i := 0; i+1 < len(r.Container) && err == nil; i += 2 {
		err = o.container.set(r.Container[i], r.Container[i+1])
	}
	if err == nil {
		err = o.container.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 2
	}
	if err := trace(o, stdout, stderr); err != nil {
		if ec, ok := err.(exitCode); ok {
			return int(ec)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// linkedTool is the tool a link to gtrace is named after, busybox
// style, or "" when gtrace runs under its own name.
func linkedTool() string {
	name := filepath.Base(os.Args[0])
	if name == "gtrace" {
		return ""
	}
	if _, err := tools.Lookup(name); err != nil {
		return ""
	}
	return name
}

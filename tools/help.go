package tools

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// UsageLine is the tool's one-line usage, as BCC's tools print it.
func (t *Tool) UsageLine() string {
	parts := []string{"usage: " + t.Name, "[-h]", "[-j]", "[-c CMD]"}
	for _, o := range t.allOptions() {
		if !t.intervalCount() || o.Name != intervalOption && o.Name != countOption {
			parts = append(parts, "["+t.spelling(o, false)+"]")
		}
	}
	if t.folds() {
		parts = append(parts, "[--flamegraph FILE]", "[--pprof FILE]")
	}
	parts = append(parts, "[--cgroup PATH | --pod UID [--container ID] | --pidns INODE]")
	for _, a := range t.positionalArguments() {
		if a.Optional {
			parts = append(parts, "["+a.Name+"]")
		} else {
			parts = append(parts, a.Name)
		}
	}
	if t.intervalCount() {
		parts = append(parts, "[interval [count]]")
	}
	return strings.Join(parts, " ")
}

// intervalCount says whether the positional INTERVAL and COUNT set the
// options interval and count: the tool reads them and declares no
// arguments of its own.
func (t *Tool) intervalCount() bool {
	_, ok := t.option(intervalOption)
	return ok && len(t.Arguments) == 0
}

// allOptions are the script's options but those its arguments set,
// then those the frame handles for the tool and the arguments a flag
// gives.
func (t *Tool) allOptions() []Option {
	var all []Option
	for _, o := range t.Options {
		if t.argument(o.Name) == nil {
			all = append(all, o)
		}
	}
	for _, f := range flagsFor(t.Name) {
		if desc, ok := frameOptions[f.Option]; ok {
			all = append(all, Option{Name: f.Option, Description: desc})
		} else if a := t.argument(f.Option); a != nil {
			all = append(all, Option{Name: a.Name, Description: a.Description, Value: f.Value})
		}
	}
	return all
}

// spelling is how usage spells an option: its short flag where one maps
// onto it, its long form otherwise or as well (long).
func (t *Tool) spelling(o Option, long bool) string {
	var short string
	for _, f := range flagsFor(t.Name) {
		if f.Option == o.Name {
			short = f.Short
			if f.Value != "" {
				short += " " + f.Value
			}
		}
	}
	longForm := "--" + o.Name
	if o.Value != "" {
		longForm += "=" + o.Value
	}
	switch {
	case short == "":
		return longForm
	case long:
		return short + ", " + longForm
	}
	return short
}

// WriteHelp writes the tool's -h: usage, what it shows, its options and
// examples.
func (t *Tool) WriteHelp(w io.Writer) error {
	fmt.Fprintf(w, "%s\n\n%s.\n", t.UsageLine(), t.Summary)
	if t.Description != "" {
		fmt.Fprintf(w, "\n%s\n", t.Description)
	}
	fmt.Fprintf(w, "\noptions:\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  -h, --help\tshow this help and exit\n")
	fmt.Fprintf(tw, "  -j, --json\tprint JSON, as bpftrace's -f json\n")
	fmt.Fprintf(tw, "  -c CMD\trun CMD, and trace until it exits\n")
	for _, o := range t.allOptions() {
		if !t.intervalCount() || o.Name != intervalOption && o.Name != countOption {
			fmt.Fprintf(tw, "  %s\t%s\n", t.spelling(o, true), o.Description)
		}
	}
	if t.folds() {
		fmt.Fprintf(tw, "  --flamegraph FILE\twrite a flame graph of the stacks at exit, .svg or .html\n")
		fmt.Fprintf(tw, "  --pprof FILE\twrite a pprof profile of the stacks at exit\n")
	}
	for _, f := range ContainerFlags {
		fmt.Fprintf(tw, "  %s %s\t%s\n", f.Flag, f.Value, f.Description)
	}
	if len(t.positionalArguments()) > 0 {
		fmt.Fprintf(tw, "\narguments:\n")
	}
	for _, a := range t.positionalArguments() {
		fmt.Fprintf(tw, "  %s\t%s\n", a.Name, a.Description)
	}
	for _, name := range []string{intervalOption, countOption} {
		if o, ok := t.option(name); ok && t.intervalCount() {
			fmt.Fprintf(tw, "  %s\t%s\n", name, o.Description)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nexamples:\n")
	for _, e := range t.Examples {
		fmt.Fprintf(w, "    %s\n", e)
	}
	return nil
}

// WriteList writes the list of tools, by group, a line each.
func WriteList(w io.Writer, all []*Tool) error {
	width := 0
	for _, t := range all {
		width = max(width, len(t.Name))
	}
	for _, g := range Groups {
		first := true
		for _, t := range all {
			if t.Group != g.Dir {
				continue
			}
			if first {
				if _, err := fmt.Fprintf(w, "%s:\n", g.Title); err != nil {
					return err
				}
				first = false
			}
			if _, err := fmt.Fprintf(w, "  %-*s  %s\n", width, t.Name, t.Summary); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteMarkdown writes the list of tools as the README shows it: a
// table per group.
func WriteMarkdown(w io.Writer, all []*Tool) error {
	for _, g := range Groups {
		var rows []string
		for _, t := range all {
			if t.Group == g.Dir {
				rows = append(rows, fmt.Sprintf("| `%s` | %s |", t.Name, t.Summary))
			}
		}
		if len(rows) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "**%s**\n\n| tool | what it shows |\n| --- | --- |\n%s\n\n", g.Title, strings.Join(rows, "\n")); err != nil {
			return err
		}
	}
	return nil
}

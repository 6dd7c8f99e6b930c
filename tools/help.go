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
	for _, o := range t.Options {
		if o.Name == intervalOption || o.Name == countOption {
			continue
		}
		parts = append(parts, "["+t.spelling(o, false)+"]")
	}
	if _, ok := t.option(intervalOption); ok {
		parts = append(parts, "[interval [count]]")
	}
	return strings.Join(parts, " ")
}

// spelling is how usage spells an option: its short flag where one maps
// onto it, its long form otherwise or as well (long).
func (t *Tool) spelling(o Option, long bool) string {
	var short string
	for _, f := range Flags {
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
	for _, o := range t.Options {
		if o.Name != intervalOption && o.Name != countOption {
			fmt.Fprintf(tw, "  %s\t%s\n", t.spelling(o, true), o.Description)
		}
	}
	for _, name := range []string{intervalOption, countOption} {
		if o, ok := t.option(name); ok {
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

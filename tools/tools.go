package tools

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

//go:embed */*.bt
var scripts embed.FS

// Tool is one tool: its script and what its first comment says.
type Tool struct {
	Name  string
	Group string // the directory it is in: storage, nvme, ...
	// Summary is the one line after the name; Description the
	// paragraphs after it, and Examples the example command lines,
	// each with its comment.
	Summary     string
	Description string
	Examples    []string
	Source      []byte
	// Options are the program options the script reads with getopt().
	Options []Option
	// Arguments are the positional arguments the first comment
	// declares, in order.
	Arguments []Argument
}

// Argument is a positional argument of a tool, declared in its first
// comment's ARGUMENTS: section as a line `name  description`, or
// `[name]  description` for one that may be left out, `[name=default]`
// for one bound to its default then. A flag may give it too, where
// Flags maps one onto its name.
type Argument struct {
	Name, Description string
	Optional          bool
	Default           string
}

// Groups are the tools' groups in the order they are listed, with their
// titles.
var Groups = []struct{ Dir, Title string }{
	{"storage", "Storage"},
	{"nvme", "NVMe/ZNS"},
	{"cpu", "CPU"},
	{"memory", "Memory"},
	{"fs", "File systems"},
	{"net", "Network"},
	{"syscalls", "Syscalls"},
	{"containers", "Containers"},
}

// All returns every tool, grouped in the order of Groups and by name
// within a group.
func All() ([]*Tool, error) {
	paths, err := fs.Glob(scripts, "*/*.bt")
	if err != nil {
		return nil, err
	}
	var all []*Tool
	for _, p := range paths {
		t, err := load(p)
		if err != nil {
			return nil, err
		}
		all = append(all, t)
	}
	order := func(t *Tool) int {
		return slices.IndexFunc(Groups, func(g struct{ Dir, Title string }) bool { return g.Dir == t.Group })
	}
	slices.SortFunc(all, func(a, b *Tool) int {
		if d := order(a) - order(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	return all, nil
}

// Lookup finds the tool called name, reading its script alone.
func Lookup(name string) (*Tool, error) {
	paths, err := fs.Glob(scripts, "*/"+name+".bt")
	if err != nil || len(paths) == 0 || strings.ContainsAny(name, "*?[/") {
		return nil, fmt.Errorf("no tool is called %q: `gtrace tools` lists them", name)
	}
	return load(paths[0])
}

// load reads the tool at path, GROUP/NAME.bt.
func load(p string) (*Tool, error) {
	src, err := scripts.ReadFile(p)
	if err != nil {
		return nil, err
	}
	t, err := parse(strings.TrimSuffix(path.Base(p), ".bt"), path.Dir(p), src)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", p, err)
	}
	return t, nil
}

// parse reads a tool's first comment and its getopt() options.
func parse(name, group string, src []byte) (*Tool, error) {
	if !slices.ContainsFunc(Groups, func(g struct{ Dir, Title string }) bool { return g.Dir == group }) {
		return nil, fmt.Errorf("group %q is none of Groups", group)
	}
	t := &Tool{Name: name, Group: group, Source: src}
	lines, err := headerLines(string(src))
	if err != nil {
		return nil, err
	}
	first, rest := lines[0], lines[1:]
	summary, ok := strings.CutPrefix(first, name+" - ")
	if !ok || summary == "" {
		return nil, fmt.Errorf("the first comment starts %q, not %q", first, name+" - SUMMARY")
	}
	t.Summary = strings.TrimSuffix(summary, ".")
	var desc []string
	section := ""
	for _, l := range rest {
		switch {
		case l == "EXAMPLES:" || l == "ARGUMENTS:":
			section = l
		case section == "":
			desc = append(desc, l)
		case strings.TrimSpace(l) == "":
		case section == "EXAMPLES:":
			t.Examples = append(t.Examples, strings.TrimSpace(l))
		default:
			a, err := argument(l)
			if err != nil {
				return nil, err
			}
			t.Arguments = append(t.Arguments, a)
		}
	}
	t.Description = strings.TrimSpace(strings.Join(desc, "\n"))
	if len(t.Examples) == 0 {
		return nil, fmt.Errorf("the first comment has no EXAMPLES")
	}
	if t.Options, err = options(name, src); err != nil {
		return nil, err
	}
	// A parameter left out would shift those after it; one a flag gives
	// has no place.
	for _, a := range t.positionalArguments() {
		if _, ok := t.option(a.Name); a.Optional && a.Default == "" && !ok {
			return nil, fmt.Errorf("argument %s may be left out, but is no option: give it a default, [%s=DEFAULT]", a.Name, a.Name)
		}
	}
	return t, nil
}

// Script is the tool's script as r runs it: with the bodies of r's
// Macros written into the one-line macros of their names.
func (t *Tool) Script(r *Run) ([]byte, error) {
	src := t.Source
	for name, body := range r.Macros {
		re := regexp.MustCompile(`(?m)^macro ` + name + `\(\) \{ .* \}$`)
		if n := len(re.FindAll(src, -1)); n != 1 {
			return nil, fmt.Errorf("tool %s: %d one-line macros %s(), want one", t.Name, n, name)
		}
		src = re.ReplaceAllLiteral(src, []byte("macro "+name+"() { "+body+" }"))
	}
	return src, nil
}

// headerLines are the lines of the script's first /* */ comment, without
// their leading " * ".
func headerLines(src string) ([]string, error) {
	start := strings.Index(src, "/*")
	end := strings.Index(src, "*/")
	if start < 0 || end < start {
		return nil, fmt.Errorf("no first comment")
	}
	var lines []string
	for _, l := range strings.Split(src[start+2:end], "\n") {
		l = strings.TrimRight(l, " \t")
		l = strings.TrimPrefix(strings.TrimLeft(l, " \t"), "*")
		lines = append(lines, strings.TrimPrefix(l, " "))
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("the first comment is empty")
	}
	return lines, nil
}

// argument reads a line of the ARGUMENTS: section.
func argument(line string) (Argument, error) {
	line = strings.TrimSpace(line)
	name, desc, _ := strings.Cut(line, " ")
	a := Argument{Name: name, Description: strings.TrimSpace(desc)}
	if inner, ok := strings.CutPrefix(name, "["); ok {
		inner, a.Optional = strings.CutSuffix(inner, "]")
		a.Name, a.Default, _ = strings.Cut(inner, "=")
	}
	if a.Name == "" || a.Description == "" || strings.ContainsAny(a.Name, "[]") {
		return Argument{}, fmt.Errorf("argument line %q is not `name  description`, `[name]  description` or `[name=default]  description`", line)
	}
	return a, nil
}

// SplitExample splits an example command line as the shell does, with
// its words in single quotes or none, into its words and its comment.
func SplitExample(e string) (words []string, comment string, err error) {
	var word strings.Builder
	inWord, quoted := false, false
	for i, c := range e {
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			word.WriteRune(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '#' && !inWord:
			return words, strings.TrimSpace(e[i+1:]), nil
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
			}
			inWord = false
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	if quoted {
		return nil, "", fmt.Errorf("example %q: a quote is not closed", e)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, "", nil
}

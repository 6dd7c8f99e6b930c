package class

import (
	"strings"

	"gtrace/compiler"
	"gtrace/probe"
)

// Compile generates the program of p and compiles it, with opts'
// settings. Its multi-kprobes get their functions through the checker's
// Expand; an error in the part of the program that comes from --filter
// or --fields is located in that option's text.
func Compile(p *Plan, opts compiler.Options) (*compiler.Program, *Script, error) {
	s := Generate(p)
	env := &probe.Env{}
	opts.Check.Expand = func(text string) ([]probe.Probe, error) {
		funcs, ok := s.Probes[text]
		if !ok {
			return env.Parse(text)
		}
		kind := probe.Kprobe
		if strings.HasPrefix(text, "kretprobe:") {
			kind = probe.Kretprobe
		}
		_, event, _ := strings.Cut(text, ":")
		return []probe.Probe{{Kind: kind, Name: text, Event: event, Funcs: funcs}}, nil
	}
	if opts.Name == "" {
		opts.Name = "class " + p.Struct
	}
	prog, err := compiler.Compile([]byte(s.Text), &opts)
	if err != nil {
		return nil, s, s.Locate(err)
	}
	return prog, s, nil
}

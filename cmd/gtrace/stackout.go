package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gtrace/codegen"
	"gtrace/flamegraph"
	"gtrace/output"
	"gtrace/pprofout"
	"gtrace/sema"
)

// flameGraphExt checks that a --flamegraph file says what it will hold.
func flameGraphExt(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg", ".html", ".htm":
		return nil
	}
	return plainError{fmt.Errorf("--flamegraph %s: the file's name must end in .svg or .html, which picks what is written", path)}
}

// stackOutputs says whether o asks for any output made of stacks.
func (o *options) stackOutputs() bool {
	return o.format == "folded" || o.flameGraph != "" || o.pprofFile != ""
}

// checkStackMaps fails, before anything is attached, when the stack
// outputs o asks for cannot be made from the program's maps: a map keyed
// by a stack must have one number per key, and the files need at least
// one such map.
func checkStackMaps(o *options, out *codegen.Output) error {
	if !o.stackOutputs() {
		return nil
	}
	found := false
	for _, l := range out.SortedMaps() {
		if !hasStackKey(l.Key) {
			continue
		}
		found = true
		v := l.Value
		if v.Kind == sema.Int || v.Kind == sema.Agg && (v.Agg == sema.AggCount || v.Agg == sema.AggSum) {
			continue
		}
		what := v.String()
		if v.Kind == sema.Agg {
			what = v.Agg.String() + "()"
		}
		return fmt.Errorf("map %s is keyed by a stack but holds %s values: folded stacks, flame graphs and pprof profiles need count(), sum() or integer values", l.Name, what)
	}
	if !found && (o.flameGraph != "" || o.pprofFile != "") {
		return errors.New("--flamegraph and --pprof need a map keyed by a stack (kstack or ustack), and the program has none")
	}
	return nil
}

// hasStackKey says whether a key type holds a stack as one of its
// parts, as output.StackSamples finds them: the key itself, or an
// element of a key of several parts. A stack nested deeper, or in a
// record, is part of a key that prints as text.
func hasStackKey(t *sema.Type) bool {
	isStack := func(t *sema.Type) bool { return t.Kind == sema.KStack || t.Kind == sema.UStack }
	if t == nil || isStack(t) {
		return t != nil
	}
	if t.Kind == sema.Tuple && t.Names == nil {
		return slices.ContainsFunc(t.Elems, isStack)
	}
	return false
}

// stackFiles are the files of --flamegraph and --pprof, created before
// tracing so that a path that cannot be written fails at once.
type stackFiles struct {
	flameGraph, pprof *os.File
}

func createStackFiles(o *options) (*stackFiles, error) {
	f := &stackFiles{}
	var err error
	if o.flameGraph != "" {
		if f.flameGraph, err = os.Create(o.flameGraph); err != nil {
			return nil, fmt.Errorf("--flamegraph: %w", err)
		}
	}
	if o.pprofFile != "" {
		if f.pprof, err = os.Create(o.pprofFile); err != nil {
			f.close()
			return nil, fmt.Errorf("--pprof: %w", err)
		}
	}
	return f, nil
}

// close closes the files, and returns the first error.
func (f *stackFiles) close() error {
	var err error
	for _, file := range []**os.File{&f.flameGraph, &f.pprof} {
		if *file != nil {
			err = cmp.Or(err, (*file).Close())
			*file = nil
		}
	}
	return err
}

// write writes maps into the files and closes them.
func (f *stackFiles) write(maps []*output.StackMap, stderr io.Writer) error {
	defer f.close()
	if len(maps) == 0 {
		fmt.Fprintln(stderr, "WARNING: no map keyed by a stack had entries: the flame graph and pprof files hold no stacks")
	}
	if f.flameGraph != nil {
		if err := writeFlameGraph(f.flameGraph, maps); err != nil {
			return err
		}
	}
	if f.pprof != nil {
		if err := pprofout.Write(f.pprof, maps, time.Now()); err != nil {
			return err
		}
	}
	return f.close()
}

// writeFlameGraph draws maps' folded stacks, as SVG or HTML by the
// file's name. Several maps share the graph, each under a frame named
// after it.
func writeFlameGraph(file *os.File, maps []*output.StackMap) error {
	var stacks []flamegraph.Stack
	unit := "samples"
	for _, sm := range maps {
		if sm.Kind != output.Count {
			unit = "units"
		}
		for _, s := range sm.Samples {
			var frames []flamegraph.Frame
			if len(maps) > 1 {
				frames = append(frames, flamegraph.Frame{Name: sm.Name})
			}
			for _, f := range s.Folded() {
				frames = append(frames, flamegraph.Frame{Name: f.Name, Kind: frameKinds[f.Kind]})
			}
			stacks = append(stacks, flamegraph.Stack{Frames: frames, Value: s.Value})
		}
	}
	opts := flamegraph.Options{Title: "Flame Graph", Unit: unit}
	if strings.EqualFold(filepath.Ext(file.Name()), ".svg") {
		return flamegraph.WriteSVG(file, stacks, opts)
	}
	return flamegraph.WriteHTML(file, stacks, opts)
}

// frameKinds color folded frames: the key's other parts and delimiters
// alike.
var frameKinds = map[output.FrameKind]flamegraph.Kind{
	output.UserFrame: flamegraph.User, output.KernelFrame: flamegraph.Kernel,
}

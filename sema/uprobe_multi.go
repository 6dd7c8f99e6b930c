package sema

import (
	"gtrace/lang/ast"
	"gtrace/probe"
)

// joinUprobes attaches the uprobes a wildcard expands to through one
// uprobe_multi link per binary, one program for all (probe.JoinUprobes),
// when the probe's code is the same for every function: its probe and
// func builtins then read the function's names by the attach cookie.
// args (each function's parameters, from DWARF) and uaddr() (relocated
// by the probe's own address) need a program per function.
func (c *checker) joinUprobes(p *ast.Probe, text string, probes []probe.Probe) []probe.Probe {
	if len(probes) < 2 || !probes[0].UserSpace() || !probe.HasUprobeMulti() || perFunction(p) {
		return probes
	}
	return probe.JoinUprobes(text, probes)
}

// perFunction reports whether p's code depends on the function a uprobe
// is on beyond its names.
func perFunction(p *ast.Probe) bool {
	found := false
	ast.Inspect(p, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || n.Name == "args"
		case *ast.Call:
			found = found || n.Name == "uaddr"
		}
		return !found
	})
	return found
}

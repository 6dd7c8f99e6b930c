package sema

import (
	"slices"

	"gtrace/probe"
)

// BuiltinNames lists the names of the builtin variables, in table order,
// for tests that walk the table; "argN" stands for arg0, arg1 and on.
func BuiltinNames() []string {
	var names []string
	for b := BPid; int(b) < len(builtins); b++ {
		names = append(names, builtins[b].name)
	}
	return names
}

// FuncNames lists the names of the builtin functions, in table order,
// for tests that walk the table.
func FuncNames() []string {
	var names []string
	for _, f := range AllFuncs() {
		names = append(names, f.String())
	}
	return names
}

// BuiltinKinds lists the probe kinds in which the builtin variable name
// may be used; nil for a builtin allowed in every kind, or for no
// builtin.
func BuiltinKinds(name string) []probe.Kind {
	return slices.Clone(builtins[lookupBuiltin(name)].probes)
}

package sema

import (
	"gtrace/lang/builtin"
	"gtrace/probe"
)

// BuiltinNames lists the names of the builtin variables the checker
// implements, in the order of the builtin package's list, for tests that
// walk the table; "argN" stands for arg0, arg1 and on.
func BuiltinNames() []string {
	var names []string
	for _, b := range builtin.All() {
		if _, ok := builtins[b]; ok {
			names = append(names, b.String())
		}
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

// BuiltinKinds lists the probe kinds whose programs can read the context
// builtin named name; nil for a builtin every kind has, or for no
// builtin.
func BuiltinKinds(name string) []probe.Kind {
	b := lookupBuiltin(name)
	if name == "argN" {
		b = builtin.ArgN
	}
	if !builtins[b].context {
		return nil
	}
	var kinds []probe.Kind
	for _, k := range probe.Kinds() {
		if (&probe.Probe{Kind: k}).Offers(b) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

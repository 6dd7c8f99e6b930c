package builtin

import "sync"

// funcs names the functions bpftrace has, builtin or from its standard
// library, as the checker declares them.
var funcs sync.Map

// DeclareFuncs records names as functions that the checker implements.
func DeclareFuncs(names ...string) {
	for _, name := range names {
		funcs.Store(name, true)
	}
}

// IsFunc reports whether name is a declared function, which a call that
// no macro of the script matches stays.
func IsFunc(name string) bool {
	_, ok := funcs.Load(name)
	return ok
}

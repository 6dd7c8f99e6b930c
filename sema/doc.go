// Package sema checks a parsed bpftrace program and works out everything
// code generation needs: the type of every expression, the layout of every
// map and scratch variable, and the probes each attach point expands to.
//
// Results live in an Info side table keyed by AST node, as go/types keeps
// them; the tree itself is never changed. Builtins and functions are one
// table, builtins.go: no other code matches their names. The names of
// builtin variables are lang/builtin's, which the parser shares; which
// of those read from the probe's context each provider offers is the
// provider's to say (probe.Probe.Offers).
package sema

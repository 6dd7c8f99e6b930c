// Package sema checks a parsed bpftrace program and works out everything
// code generation needs: the type of every expression, the layout of every
// map and scratch variable, and the probes each attach point expands to.
//
// Results live in an Info side table keyed by AST node, as go/types keeps
// them; the tree itself is never changed. Builtins and functions are one
// table, builtins.go: no other code matches their names.
package sema

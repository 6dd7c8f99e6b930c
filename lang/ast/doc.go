// Package ast declares the syntax tree of a bpftrace program.
//
// Every node records the byte span it was parsed from, so that any later
// stage can point at it in an error. The tree holds syntax only: types and
// other facts found by the semantic passes live in side tables (sema.Info),
// keyed by node, as go/types keeps them.
package ast

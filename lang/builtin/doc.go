// Package builtin names bpftrace's builtin variables. It is the one list
// of their names: the parser reads it to tell a cast "(name)" from a
// parenthesised expression, the checker keys its table of types by it,
// and each probe provider says with it which context builtins its
// programs can read. It imports nothing of gtrace.
package builtin

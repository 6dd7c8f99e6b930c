// Package macro expands bpftrace's macros, `macro name(x, $y, @z) { ...
// }`, into their calls, between parsing and checking.
//
// A call becomes a block expression: a copy of the macro's body, whose
// value is the call's. A name parameter (x) is replaced by the argument
// wherever the body names it, so that an expression passed runs as many
// times as the body uses it; a variable or a map passed for one is only
// read. A $variable or @map parameter takes the caller's variable or map
// by reference: the body reads and writes the caller's. The variables
// the body assigns or declares are its own, renamed as bpftrace renames
// them ($$name_$v, $$name_N_$v in a macro N calls deep) so that they
// never meet the caller's; any other variable or map in the body is an
// error.
//
// Several macros may share a name when their parameters differ in number
// or kind; a call takes the first that matches it exactly. A call that
// matches none is an error naming the closest, unless a builtin has the
// name, which bpftrace's standard library provides as a macro. Macros
// call other macros, in any order of definition, but never themselves,
// directly or not. The expansions are bounded in size.
//
// The copies keep the spans of the body, and each expanded block the span
// of its call, so that the checker can say where an error in a body was
// expanded from.
package macro

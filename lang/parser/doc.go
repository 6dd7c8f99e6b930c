// Package parser builds the syntax tree of a bpftrace program.
//
// ParseFile is a recursive descent parser over the tokens of package
// scanner, with C precedence for binary operators. It reports syntax errors
// the way bpftrace's bison parser did, "syntax error, unexpected X,
// expecting Y", recovers at the next ';' or '}' to find more, and gives up
// after ten errors.
package parser

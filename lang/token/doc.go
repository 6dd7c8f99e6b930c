// Package token defines the lexical tokens of the bpftrace language and the
// source positions that every later stage uses to report errors.
//
// A Pos is a byte offset into one source file; it becomes a line and column
// only when printed, through File.Position.
package token

// Package cpp is the C preprocessor subset that runs over a bpftrace script
// before it is scanned, so that scripts written for bpftrace's clang front
// end work without clang or kernel headers.
//
// It handles #define (object-like and function-like macros), #undef,
// #include, #if, #ifdef, #ifndef, #elif, #else, #endif, #error and line
// continuations. BPFTRACE_HAVE_BTF is predefined, as bpftrace defines it.
// #include "FILE" reads FILE from the including file's directory or, as
// #include <FILE> does, from Options.IncludeDirs (gtrace's -I), and
// preprocesses it with the script's macros. A header found nowhere must
// be a system header the table in headers.go knows: types come from the
// kernel's BTF, and the header defines its constants from that table.
// Anything else is an error at the directive.
//
// Macros expand everywhere in the script except in string literals,
// comments, attach points, $variables and @maps. The scanner of
// lang/scanner finds those, so the preprocessor splits the script into
// tokens exactly as the parser will.
//
// Positions: the expanded source keeps the line structure of the original.
// Directive lines and skipped groups become spaces (their newlines stay),
// so text that no macro touched keeps its offset, line and column. A macro
// invocation is replaced in place; an invocation over several lines is
// followed by its newlines and enough spaces to put the next text back in
// its column. Result.Span maps a span of the expanded source back to the
// original, and a span inside an expansion becomes the whole invocation.
// An included file's expanded text goes on its directive's line, its
// comments and newlines made spaces, so that it keeps its length; there
// Result.Errors maps spans to that file, through its own expansions.
package cpp

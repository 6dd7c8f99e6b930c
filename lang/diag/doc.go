// Package diag holds the diagnostics of every stage and prints them as
// bpftrace does: "FILE:LINE:COL-COL: ERROR: message", the source line, and a
// "~~~" underline under the span.
package diag

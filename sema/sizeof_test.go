package sema

import (
	"testing"

	"gtrace/lang/ast"
)

// TestSizeofInts checks sizeof of every integer type, of the fixed-width
// typedefs and of bools.
func TestSizeofInts(t *testing.T) {
	tests := []struct {
		expr string
		want int64
	}{
		{"sizeof(uint8)", 1}, {"sizeof(int8)", 1},
		{"sizeof(uint16)", 2}, {"sizeof(int16)", 2},
		{"sizeof(uint32)", 4}, {"sizeof(int32)", 4},
		{"sizeof(uint64)", 8}, {"sizeof(int64)", 8},
		{"sizeof(u8)", 1}, {"sizeof(s16)", 2}, {"sizeof(u32)", 4}, {"sizeof(__u64)", 8},
		{"sizeof(uint64_t)", 8}, {"sizeof(int32_t)", 4},
		{"sizeof(bool)", 1}, {"sizeof(1 == 1)", 1}, {"sizeof(true)", 1},
		{"sizeof((int16)1)", 2}, {"sizeof(pid)", 4},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			info, errs := check(t, "BEGIN { @x = "+tt.expr+"; }", false)
			if errs != "" {
				t.Fatal(errs)
			}
			p := info.Progs[0]
			rhs := p.Node.Body.Stmts[0].(*ast.AssignStmt).RHS
			if got := p.Consts[rhs]; got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

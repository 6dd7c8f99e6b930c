package parser

import (
	"os"
	"testing"

	"gtrace/lang/ast"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

func TestDev(t *testing.T) {
	src := os.Getenv("SRC")
	if src == "" {
		t.Skip()
	}
	name := "stdin"
	if fn := os.Getenv("FILE"); fn != "" {
		b, _ := os.ReadFile(fn)
		src, name = string(b), fn
	}
	f := token.NewFile(name, []byte(src))
	prog, errs := ParseFile(f)
	diag.Render(os.Stdout, f, errs)
	if len(errs) == 0 {
		ast.Dump(os.Stdout, prog)
	}
}

package parser

import (
	"bytes"
	"strings"
	"testing"

	"gtrace/lang/ast"
)

// printed is src's tree as ast.Print writes it.
func printed(t *testing.T, src string) string {
	t.Helper()
	var b bytes.Buffer
	ast.Print(&b, mustParse(t, src), nil)
	return b.String()
}

// firstValue returns the value assigned by the first statement of the
// first probe.
func firstValue(t *testing.T, src string) ast.Expr {
	t.Helper()
	prog := mustParse(t, src)
	switch s := prog.Probes[0].Body.Stmts[0].(type) {
	case *ast.AssignStmt:
		return s.RHS
	case *ast.LetStmt:
		return s.Value
	case *ast.ExprStmt:
		return s.X
	}
	t.Fatalf("%s: no value in the first statement", src)
	return nil
}

func TestBlockExpr(t *testing.T) {
	tests := []struct {
		src   string
		stmts int
		value string // paren of the value, "" for none
	}{
		{`BEGIN { $x = { let $a = 1; $a + 1 }; }`, 1, "($a + 1)"},
		{`BEGIN { $x = { 1 }; }`, 0, "1"},
		{`BEGIN { $x = { $a = 1; $a = 2 }; }`, 2, ""},
		{`BEGIN { $x = { $a = 1; $a; }; }`, 2, ""},
		{`BEGIN { $x = { }; }`, 0, ""},
		{`BEGIN { $x = { printf("a"); count() }; }`, 1, "count()"},
		// A nested block is an expression: it may be the value, and
		// needs no ';' before what follows it.
		{`BEGIN { $x = { { 1 } }; }`, 0, "{...}"},
		{`BEGIN { $x = { { $a = 1; } $a }; }`, 1, "$a"},
		{`BEGIN { $x = { 2 } + { 1 }; }`, 0, "2"},
	}
	for _, tt := range tests {
		x := firstValue(t, tt.src)
		if bin, ok := x.(*ast.Binary); ok {
			x = bin.X
		}
		b, ok := x.(*ast.BlockExpr)
		if !ok {
			t.Errorf("%s: value is %T, want a block expression", tt.src, x)
			continue
		}
		value := ""
		switch v := b.Value.(type) {
		case nil:
		case *ast.BlockExpr:
			value = "{...}"
		default:
			value = paren(v)
		}
		if len(b.Stmts) != tt.stmts || value != tt.value {
			t.Errorf("%s: %d statements, value %q; want %d, %q", tt.src, len(b.Stmts), value, tt.stmts, tt.value)
		}
	}
}

// TestBlockExprPlaces parses block expressions wherever an expression
// goes, and prints them back.
func TestBlockExprPlaces(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { print({ 1 }); }`, "print({ 1 });"},
		{`BEGIN { @m[{ 1 }, 2] = ({ "a" }, 3); }`, `@m[{ 1 },2] = ({ "a" },3);`},
		{`BEGIN { $t = $c ? { 1 } : { 2 }; }`, "$t = $c ? { 1 } : { 2 };"},
		{`BEGIN { $y = { $a = 1; $a } + 1; }`, "$y = {\n         $a = 1;\n         $a\n       } + 1;"},
		{`BEGIN /{ 1 }/ { }`, "/{ 1 }/"},
	}
	for _, tt := range tests {
		if got := printed(t, tt.src); !strings.Contains(got, tt.want) {
			t.Errorf("%s: printed\n%s\nwant it to hold\n%s", tt.src, got, tt.want)
		}
	}
}

func TestMacro(t *testing.T) {
	src := "macro add(x, $y, @m) { @m = x; $y + 1 }\nBEGIN { print(add(1, $a, @b)); }\nmacro none() { printf(\"hi\"); }"
	prog := mustParse(t, src)
	if len(prog.Macros) != 2 || len(prog.Probes) != 1 {
		t.Fatalf("%d macros and %d probes, want 2 and 1", len(prog.Macros), len(prog.Probes))
	}
	m := prog.Macros[0]
	if m.Name != "add" || len(m.Params) != 3 || src[m.Head.Start:m.Head.End] != "macro add" {
		t.Errorf("macro %s, %d params, head %q", m.Name, len(m.Params), src[m.Head.Start:m.Head.End])
	}
	kinds := []string{}
	for _, p := range m.Params {
		switch p.(type) {
		case *ast.Ident:
			kinds = append(kinds, "ident")
		case *ast.Var:
			kinds = append(kinds, "var")
		case *ast.Map:
			kinds = append(kinds, "map")
		}
	}
	if got := strings.Join(kinds, " "); got != "ident var map" {
		t.Errorf("parameter kinds %s", got)
	}
	if len(m.Body.Stmts) != 1 || paren(m.Body.Value) != "($y + 1)" {
		t.Errorf("body: %d statements, value %s", len(m.Body.Stmts), paren(m.Body.Value))
	}
	if n := prog.Macros[1]; len(n.Params) != 0 || n.Body.Value != nil || len(n.Body.Stmts) != 1 {
		t.Errorf("macro none: %d params, value %v, %d statements", len(n.Params), n.Body.Value, len(n.Body.Stmts))
	}
	// Definitions are not printed, as in bpftrace.
	if got := printed(t, src); strings.Contains(got, "macro") {
		t.Errorf("printed a macro:\n%s", got)
	}
}

func TestMacroErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"macro test(pid) { } BEGIN { }", "1:12-15: builtin 'pid' can't be used as a macro argument"},
		{"macro greet { } BEGIN { }", "1:13-14: syntax error, unexpected {, expecting ("},
		{"macro f(1) { } BEGIN { }", "1:9-10: syntax error, unexpected integer, expecting variable or map or identifier"},
		{"macro f(a b) { } BEGIN { }", `1:11-12: syntax error, unexpected identifier, expecting ) or ","`},
		{"macro f() { } config = { a = 1 } BEGIN { }", "1:15-21: config must appear before probes"},
		{"macro f() { } #include <x>\nBEGIN { }", "1:15-27: C definitions must appear before probes"},
		// Recovery goes on at the next macro.
		{"macro f( { } macro g(1) { } BEGIN { }",
			"1:10-11: syntax error, unexpected {, expecting variable or map or identifier; 1:22-23: syntax error, unexpected integer, expecting variable or map or identifier"},
	}
	for _, tt := range tests {
		_, errs := parse(t, tt.src)
		if got := strings.Join(errs, "; "); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

// TestMacroKeyword keeps `macro` a name where it is no definition.
func TestMacroKeyword(t *testing.T) {
	prog := mustParse(t, "BEGIN { $x = $t->macro; }")
	f, ok := prog.Probes[0].Body.Stmts[0].(*ast.AssignStmt).RHS.(*ast.Field)
	if !ok || f.Name != "macro" {
		t.Errorf("field %v", f)
	}
}

package sema

import (
	"bytes"
	"strings"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/macro"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// checkMacros expands src's macros, checks it and renders what the
// checker says, notes included.
func checkMacros(t *testing.T, src string) (*Info, string) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	if errs := macro.Expand(prog); errs.HasErrors() {
		t.Fatalf("expand %q: %v", src, errs)
	}
	info, errs := Check(prog, fakeOptions(DefaultConfig()))
	var b bytes.Buffer
	diag.Render(&b, f, errs)
	return info, b.String()
}

func TestBlockExprTypes(t *testing.T) {
	tests := []struct{ src, m, key, value string }{
		{`BEGIN { @x = { let $a = "abc"; $a }; }`, "@x", "", "string[4]"},
		{`BEGIN { @x[{ 1 }, { "a" }] = { $b = 2; $b * 2 }; }`, "@x", "(int64,string[2])", "int64"},
		{`BEGIN { @x = (1, { 2 }); }`, "@x", "", "(int8,int8)"},
		{`BEGIN { @x = 1 ? { 1 } : { 2 }; }`, "@x", "", "int64"},
		{`BEGIN { @x = { { true } }; }`, "@x", "", "bool"},
		{`BEGIN { let $x = { let $x = 1; $x }; @x = $x; }`, "@x", "", "int8"},
		{`macro inc($v) { $v += 1; $v } BEGIN { $a = 1; @x = inc($a); }`, "@x", "", "int64"},
		{`macro s(@m) { @m[1] = "a"; } BEGIN { s(@x); }`, "@x", "int64", "string[2]"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := checkMacros(t, tt.src)
			if errs != "" {
				t.Fatalf("unexpected errors:\n%s", errs)
			}
			m := info.Maps[tt.m]
			if got := typeList(m.Key); got != tt.key {
				t.Errorf("key type %s, want %s", got, tt.key)
			}
			if got := m.Value.String(); got != tt.value {
				t.Errorf("value type %s, want %s", got, tt.value)
			}
		})
	}
}

func TestBlockExprErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { $x = { $a = 1; }; }`, "Invalid expression for assignment"},
		{`BEGIN { let $x = { }; }`, "Invalid expression for assignment"},
		{`BEGIN { $x = print(1); }`, "Invalid expression for assignment"},
		{`BEGIN { @x = { $a = 1; }; }`, "Can not assign a value of type 'none' to @x"},
		{`BEGIN { print({ printf("a"); }); }`, "print() can not print a value of type 'none'"},
		{`BEGIN { if ({ }) { } }`, "Invalid condition: expected an integer, a bool or a pointer, got 'none'"},
		{`BEGIN { $t = (1, { }); }`, "Value of type 'none' can not be part of a tuple"},
		{`BEGIN { @m[{ }] = 1; }`, "Value of type 'none' can not be used as a map key"},
		{`BEGIN { $x = 1 + { }; }`, "Type mismatch for '+': comparing 'int8' with 'none'"},
		// let declares a variable for the block only.
		{`BEGIN { $x = { let $a = 1; $a }; print($a); }`, "Undefined or undeclared variable: $a"},
		{`BEGIN { $x = { exit(); 1 }; }`, "WARNING: Unreachable statement."},
	}
	for _, tt := range tests {
		if _, errs := checkMacros(t, tt.src); !strings.Contains(errs, tt.want) {
			t.Errorf("%s: got\n%s\nwant %q", tt.src, errs, tt.want)
		}
	}
}

// TestExpandedFrom follows an error in a macro's body with the calls it
// was expanded from, innermost first, as bpftrace does.
func TestExpandedFrom(t *testing.T) {
	src := `macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }`
	want := `stdin:1:18-24: ERROR: Type mismatch for '+': comparing 'string[2]' with 'int8'
macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }
                 ~~~~~~
stdin:1:44-52: ERROR: expanded from
macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }
                                           ~~~~~~~~
stdin:1:73-81: ERROR: expanded from
macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }
                                                                        ~~~~~~~~
stdin:1:18-24: ERROR: Type mismatch for '+': comparing 'string[2]' with 'int8'
macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }
                 ~~~~~~
stdin:1:44-52: ERROR: expanded from
macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }
                                           ~~~~~~~~
stdin:1:83-91: ERROR: expanded from
macro add2($x) { $x + 1 } macro add1($x) { add2($x) } BEGIN { $a = "s"; add1($a); add1($a); }
                                                                                  ~~~~~~~~
`
	if _, got := checkMacros(t, src); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestExpandedOnce reports an error in a probe with two attach points
// once, notes and all.
func TestExpandedOnce(t *testing.T) {
	src := `macro bad() { nosuch() } interval:s:1, interval:s:2 { bad(); }`
	if _, got := checkMacros(t, src); strings.Count(got, "Unknown function: nosuch") != 1 || strings.Count(got, "expanded from") != 1 {
		t.Errorf("got\n%s", got)
	}
}

package codegen_test

import (
	"testing"

	"gtrace/codegen"
	"gtrace/internal/testutils"
	"gtrace/lang/macro"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/sema"
)

// blockSamples use block expressions and macros wherever values go:
// integers, strings, tuples, map keys and values, loops and exits in
// them.
var blockSamples = []string{
	`BEGIN { $x = { let $a = 1; $a + 1 }; @x = $x; }`,
	`BEGIN { @s = { let $s = "abc"; $s }; @t = (1, { "b" }); @k[{ 2 }, { comm }] = { 3 }; }`,
	`BEGIN { printf("%d %s\n", { 1 }, { "x" }); print({ (1, "a") }); }`,
	`BEGIN { $c = 1; @v = $c ? { $d = 2; $d } : { 3 }; if ({ $c > 0 }) { @w = 1; } }`,
	`interval:s:1 /{ let $p = pid; $p > 1 }/ { @n = count(); }`,
	`BEGIN { $x = { exit(); 1 }; @x = $x; }`,
	`BEGIN { @m[1] = 5; @m[2] = 10; @sum = { let $t = 0; for ($kv : @m) { $t += $kv.1; } $t }; }`,
	`BEGIN { @r = { let $t = 0; for ($i : 0..3) { if ($i == 2) { return; } $t += $i; } $t }; }`,
	`macro inc($x) { $x += 1; $x } macro set(@m) { @m[1] = 2; } macro twice(x) { x + x }
	 macro early() { exit(); } macro hi() { printf("hi\n") } macro fmt() { "%d\n" }
	 BEGIN { $a = 1; @b = inc($a); set(@m); @c = twice({ $a += 1; $a }); hi(); printf(fmt(), $a); early(); @d = 1; }`,
	`macro first_key(@x) { let $x; for ($k : @x) { $x = $k.0; break; } $x }
	 BEGIN { @a[1] = 0; @b[2] = 0; @f = (first_key(@a), first_key(@b)); }`,
	`macro str2(x) { let $s = x; $s } BEGIN { @s = str2(comm); @t = str2("abc"); }`,
	`macro top() { 3 } BEGIN { @m[1] = 1; print(@m, top); unroll (top) { @u++; } @h = hist(5, top); @l = lhist(1, 0, { 10 }, top()); }`,
}

// compileExpanded expands src's macros, checks it against the fake
// kernel and compiles it; every step must succeed.
func compileExpanded(t *testing.T, src string) *codegen.Output {
	t.Helper()
	f := token.NewFile("sample.bt", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse: %v", errs)
	}
	if errs := macro.Expand(prog); errs.HasErrors() {
		t.Fatalf("expand: %v", errs)
	}
	info, errs := sema.Check(prog, fakeOptions())
	if errs.HasErrors() {
		t.Fatalf("check: %v", errs)
	}
	out, err := codegen.Compile(info, &codegen.Options{NumCPU: 2, File: f})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return out
}

// TestBlockExprs compiles the samples without a kernel.
func TestBlockExprs(t *testing.T) {
	for _, src := range blockSamples {
		t.Run(src, func(t *testing.T) { compileExpanded(t, src) })
	}
}

// TestBlockExprsVerifier loads the samples through this machine's
// verifier.
func TestBlockExprsVerifier(t *testing.T) {
	testutils.RequireRoot(t)
	for _, src := range blockSamples {
		t.Run(src, func(t *testing.T) { load(t, compileExpanded(t, src)) })
	}
}

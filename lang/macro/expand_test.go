package macro

import (
	"bytes"
	"strings"
	"testing"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// expand parses and expands src, and returns its probes printed on one
// line and its diagnostics rendered.
func expand(t *testing.T, src string) (string, string) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	var msgs bytes.Buffer
	diag.Render(&msgs, f, Expand(prog))
	var out bytes.Buffer
	ast.Print(&out, prog, nil)
	return strings.Join(strings.Fields(out.String()), " "), msgs.String()
}

func TestExpand(t *testing.T) {
	builtin.DeclareFuncs("strlen") // as the checker does
	tests := []struct{ name, src, want string }{
		{"variable by reference",
			`macro inc($x) { $x += 1; $x } BEGIN { $a = 1; $b = inc($a); }`,
			"$b = { $a += 1; $a };"},
		{"map by reference",
			`macro set(@x) { @x[1] = 2; @x } BEGIN { print(set(@a)); }`,
			"print({ @a[1] = 2; @a });"},
		{"own variables renamed",
			`macro inc(x) { $y = x + 1; $y } BEGIN { $y = 2; $z = inc(5); }`,
			"$y = 2; $z = { $$inc_$y = 5 + 1; $$inc_$y };"},
		{"declared variables renamed",
			`macro m() { let $y = 1; for ($k : 0..2) { $y++; } $y } BEGIN { print(m()); }`,
			"print({ let $$m_$y = 1; for $$m_$k : 0..2 { $$m_$y++; } $$m_$y });"},
		{"nested macros rename by depth",
			`macro a(x) { $v = x; $v } macro b(x) { $v = a(x); $v } BEGIN { print(b(1)); }`,
			"print({ $$b_$v = { $$a_2_$v = 1; $$a_2_$v }; $$b_$v });"},
		{"expression argument at each use",
			`macro twice(x) { x * x } BEGIN { print(twice(1 + 2)); }`,
			"print({ (1 + 2) * (1 + 2) });"},
		{"variable argument only read",
			`macro twice(x) { x + x } BEGIN { $a = 1; print(twice($a)); }`,
			"print({ { $a } + { $a } });"},
		{"arguments in the caller's names",
			`macro id(x) { x } macro f($v) { id($v + 1) } BEGIN { $a = 1; print(f($a)); }`,
			"print({ { $a + 1 } });"},
		{"without parentheses",
			`macro one() { 1 } BEGIN { print(one + one()); }`,
			"print({ 1 } + { 1 });"},
		{"string literal",
			`macro fmt() { "%d\n" } BEGIN { printf(fmt(), 1); }`,
			`printf("%d\n", 1);`},
		{"statements only",
			`macro hi() { printf("hi"); } BEGIN { hi(); }`,
			`{ printf("hi"); };`},
		{"overloads by kind",
			`macro k($x) { 1 } macro k(@x) { 2 } macro k(x) { 3 } BEGIN { $v = 0; @m = 0; print((k($v), k(@m), k(5), k(@m[1]))); }`,
			"print(({ 1 },{ 2 },{ 3 },{ 3 }));"},
		{"overloads by count",
			`macro k() { 0 } macro k(x) { x } macro k(x, y) { y } BEGIN { print((k, k(1), k(1, 2))); }`,
			"print(({ 0 },{ 1 },{ 2 }));"},
		{"builtins kept when no macro matches",
			`macro cpu(x) { x } BEGIN { print((cpu, cpu(2))); }`,
			"print((cpu,{ 2 }));"},
		{"functions kept when no macro matches",
			`macro strlen(x, y) { x } BEGIN { print((strlen("a"), strlen(1, 2))); }`,
			`print((strlen("a"),{ 1 }));`},
		{"parameters before macros",
			`macro add() { 2 } macro ident(add) { add } BEGIN { print(ident(1)); }`,
			"print({ 1 });"},
		{"unknown functions kept",
			`macro a(x) { nosuch(x) } BEGIN { print(a(1)); }`,
			"print({ nosuch(1) });"},
		{"any order of definition",
			`macro b(x) { a(x) } macro a(x) { x } BEGIN { print(b(1)); }`,
			"print({ { 1 } });"},
		{"predicates",
			`macro big(x) { x > 10 } kprobe:f /big(arg0)/ { }`,
			"/{ arg0 > 10 }/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := expand(t, tt.src)
			if strings.Contains(errs, "ERROR") {
				t.Fatalf("errors:\n%s", errs)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got\n%s\nwant it to hold\n%s", got, tt.want)
			}
			if strings.Contains(got, "macro") {
				t.Errorf("definitions left in %s", got)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{`macro add($x, y) { $x + 1 } BEGIN { add(1, 1); }`, `
stdin:1:37-46: ERROR: Call to add() has arguments that do not match any definition.
macro add($x, y) { $x + 1 } BEGIN { add(1, 1); }
                                    ~~~~~~~~~
stdin:1:41-42: ERROR: Mismatched arg. add() expects a variable for arg $x but got an expression.
macro add($x, y) { $x + 1 } BEGIN { add(1, 1); }
                                        ~
stdin:1:11-13: ERROR: This is the argument in the closest definition.
macro add($x, y) { $x + 1 } BEGIN { add(1, 1); }
          ~~
`},
		{`macro add(x) { x } macro add(x, y) { y } BEGIN { add(1, 1, 1); }`, `
stdin:1:50-62: ERROR: Call to add() has arguments that do not match any definition.
macro add(x) { x } macro add(x, y) { y } BEGIN { add(1, 1, 1); }
                                                 ~~~~~~~~~~~~
stdin:1:20-29: ERROR: The closest definition of add() has a different number of arguments. Expected: 2 but got 3
macro add(x) { x } macro add(x, y) { y } BEGIN { add(1, 1, 1); }
                   ~~~~~~~~~
`},
		{`macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }`, `
stdin:1:38-45: ERROR: Call to set() has arguments that do not match any definition.
macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }
                                     ~~~~~~~
stdin:1:42-44: ERROR: Mismatched arg. set() expects a map for arg @x but got a variable.
macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }
                                         ~~
stdin:1:11-13: ERROR: This is the argument in the closest definition.
macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }
          ~~
stdin:1:47-57: ERROR: Call to set() has arguments that do not match any definition.
macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }
                                              ~~~~~~~~~~
stdin:1:51-56: ERROR: Mismatched arg. set() expects a map for arg @x but got an expression.
macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }
                                                  ~~~~~
stdin:1:11-13: ERROR: This is the argument in the closest definition.
macro set(@x) { @x } BEGIN { $a = 0; set($a); set(@a[1]); }
          ~~
`},
		{`macro set($x) { $x } macro set($x) { 1 } BEGIN { }`, `
stdin:1:22-31: ERROR: Redefinition of macro: set
macro set($x) { $x } macro set($x) { 1 } BEGIN { }
                     ~~~~~~~~~
stdin:1:1-10: ERROR: This is the original definition.
macro set($x) { $x } macro set($x) { 1 } BEGIN { }
~~~~~~~~~
`},
		{`macro a(x) { b(x) } macro b(x) { a(x) } BEGIN { print(a(1)); }`, `
stdin:1:34-38: ERROR: Recursive macro call detected. Call chain: a > b > a
macro a(x) { b(x) } macro b(x) { a(x) } BEGIN { print(a(1)); }
                                 ~~~~
`},
		{`macro a() { a } BEGIN { a; }`, `
stdin:1:13-14: ERROR: Recursive macro call detected. Call chain: a > a
macro a() { a } BEGIN { a; }
            ~
`},
		{`macro m(@x) { @y = @x; $v } BEGIN { m(@a); }`, `
stdin:1:15-17: ERROR: Unhygienic access to map: @y. Maps must be passed into the macro as arguments.
macro m(@x) { @y = @x; $v } BEGIN { m(@a); }
              ~~
stdin:1:24-26: ERROR: Unhygienic access to variable: $v. Variables must be passed into the macro as arguments.
macro m(@x) { @y = @x; $v } BEGIN { m(@a); }
                       ~~
`},
		{`macro set($x) { let $x = 1; $x } BEGIN { $y = 1; set($y); }`, `
stdin:1:17-27: ERROR: Variable declaration shadows macro arg $x
macro set($x) { let $x = 1; $x } BEGIN { $y = 1; set($y); }
                ~~~~~~~~~~
`},
		{`macro s(@x, $y, @x) { 1 } BEGIN { }`, `
stdin:1:17-19: ERROR: Map for macro argument has already been used: @x
macro s(@x, $y, @x) { 1 } BEGIN { }
                ~~
`},
		{`macro s($y, $y) { 1 } macro t(a, a) { 1 } BEGIN { }`, `
stdin:1:13-15: ERROR: Variable for macro argument has already been used: $y
macro s($y, $y) { 1 } macro t(a, a) { 1 } BEGIN { }
            ~~
stdin:1:34-35: ERROR: Ident for macro argument has already been used: a
macro s($y, $y) { 1 } macro t(a, a) { 1 } BEGIN { }
                                 ~
`},
	}
	for _, tt := range tests {
		_, got := expand(t, tt.src)
		if want := strings.TrimPrefix(tt.want, "\n"); got != want {
			t.Errorf("%s\ngot\n%s\nwant\n%s", tt.src, got, want)
		}
	}
}

// TestExpansionSize stops a macro that doubles its argument, called on
// itself over and over, before it fills memory.
func TestExpansionSize(t *testing.T) {
	src := "macro d(x) { x + x } BEGIN { print(" + strings.Repeat("d(", 40) + "1" + strings.Repeat(")", 40) + "); }"
	_, errs := expand(t, src)
	if !strings.Contains(errs, "ERROR: macro expansion too large: more than 100000 nodes") {
		t.Errorf("errors:\n%s", errs)
	}
}

// TestExpansionSpans keeps the body's spans in the expansion, and the
// call's on the block that replaces it.
func TestExpansionSpans(t *testing.T) {
	src := `macro inc($x) { $x += 1; $x } BEGIN { $a = 1; $b = inc($a); }`
	prog, _ := parser.ParseFile(token.NewFile("stdin", []byte(src)))
	if errs := Expand(prog); len(errs) > 0 {
		t.Fatal(errs)
	}
	b := prog.Probes[0].Body.Stmts[1].(*ast.AssignStmt).RHS.(*ast.BlockExpr)
	text := func(n ast.Node) string { return src[n.Span().Start:n.Span().End] }
	if text(b) != "inc($a)" || b.Macro != "inc" {
		t.Errorf("block at %q, of macro %q", text(b), b.Macro)
	}
	if got := text(b.Stmts[0]); got != "$x += 1" {
		t.Errorf("statement at %q", got)
	}
}

// TestCopyShares checks that expansions share no node with each other
// or with the definition, as the checker types each node once.
func TestCopyShares(t *testing.T) {
	body := `{ let $s: int64 = 1; if ($s > 0) { $s++; } else { $s--; } while ($s < 3) { $s += 1; break; }
	  unroll (2) { @m[$s, "k"] = ($s, -$s); } for ($kv : @m) { continue; } for ($i : 0..2) { return; }
	  $t = sizeof(int64) + offsetof(struct task_struct, pid) + (int8)$s; printf("%d", $s ? x : 2);
	  $p = (struct task_struct *)0; $q = $p->pid + *$p.x; $r = x[1]; print(@m); { $s } }`
	src := "macro all(x, @m) " + body + " BEGIN { $y = 1; all($y, @n); all(2, @o); }"
	prog, _ := parser.ParseFile(token.NewFile("stdin", []byte(src)))
	def := prog.Macros[0]
	if errs := Expand(prog); len(errs) > 0 {
		t.Fatal(errs)
	}
	seen := map[ast.Node]string{}
	record := func(owner string, root ast.Node) {
		ast.Inspect(root, func(n ast.Node) bool {
			if prev, ok := seen[n]; ok && prev != owner {
				t.Errorf("%T at %v is in %s and %s", n, n.Span(), prev, owner)
			}
			seen[n] = owner
			return true
		})
	}
	record("the definition", def)
	for i, s := range prog.Probes[0].Body.Stmts[1:] {
		record([]string{"the first call", "the second call"}[i], s)
	}
}

// TestNoMacros leaves a program without macros as it is.
func TestNoMacros(t *testing.T) {
	prog, _ := parser.ParseFile(token.NewFile("stdin", []byte(`BEGIN { $x = { 1 }; }`)))
	body := prog.Probes[0].Body
	if errs := Expand(prog); len(errs) > 0 || prog.Probes[0].Body != body {
		t.Errorf("errors %v, body replaced: %v", errs, prog.Probes[0].Body != body)
	}
}

// TestMacroHidesFunction warns of a macro named as a function, whose
// calls it takes over; the expansion still happens, as in bpftrace.
func TestMacroHidesFunction(t *testing.T) {
	builtin.DeclareFuncs("count")
	got, msgs := expand(t, `macro count() { 5 } BEGIN { @a = count(); }`)
	want := `stdin:1:1-12: WARNING: macro count hides the function count(): its calls with 0 arguments expand the macro
macro count() { 5 } BEGIN { @a = count(); }
~~~~~~~~~~~
`
	if msgs != want || !strings.Contains(got, "@a = { 5 }") {
		t.Errorf("got %q and messages\n%s\nwant @a = { 5 } and\n%s", got, msgs, want)
	}
}

// TestMacroHidesBuiltin warns of a macro without parameters named as a
// builtin, which a bare use of the name expands too.
func TestMacroHidesBuiltin(t *testing.T) {
	got, msgs := expand(t, `macro pid() { 5 } BEGIN { @a = pid; }`)
	want := `stdin:1:1-10: WARNING: macro pid hides the builtin pid: the program's pid expands the macro
macro pid() { 5 } BEGIN { @a = pid; }
~~~~~~~~~
`
	if msgs != want || !strings.Contains(got, "@a = { 5 }") {
		t.Errorf("got %q and messages\n%s\nwant @a = { 5 } and\n%s", got, msgs, want)
	}
}

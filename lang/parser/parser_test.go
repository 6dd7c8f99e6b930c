package parser

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/lang/ast"
	"gtrace/lang/token"
)

func parse(t testing.TB, src string) (*ast.Program, []string) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	prog, errs := ParseFile(f)
	var msgs []string
	for _, e := range errs {
		b, end := f.Position(e.Span.Start), f.Position(e.Span.End)
		msgs = append(msgs, fmt.Sprintf("%d:%d-%d: %s", b.Line, b.Column, end.Column, e.Msg))
	}
	return prog, msgs
}

func mustParse(t *testing.T, src string) *ast.Program {
	t.Helper()
	prog, errs := parse(t, src)
	if len(errs) > 0 {
		t.Fatalf("ParseFile(%q): %s", src, strings.Join(errs, "; "))
	}
	return prog
}

// paren renders an expression with every operation in parentheses.
func paren(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.IntLit:
		return fmt.Sprint(x.Value)
	case *ast.StrLit:
		return fmt.Sprintf("%q", x.Value)
	case *ast.BoolLit:
		return fmt.Sprint(x.Value)
	case *ast.Ident:
		return x.Name
	case *ast.Var:
		return x.Name
	case *ast.Positional:
		if x.Count {
			return "$#"
		}
		return fmt.Sprintf("$%d", x.N)
	case *ast.Map:
		if len(x.Keys) == 0 {
			return x.Name
		}
		return x.Name + "[" + list(x.Keys) + "]"
	case *ast.Call:
		return x.Name + "(" + list(x.Args) + ")"
	case *ast.Binary:
		return "(" + paren(x.X) + " " + x.Op.String() + " " + paren(x.Y) + ")"
	case *ast.Unary:
		return "(" + x.Op.String() + paren(x.X) + ")"
	case *ast.IncDec:
		if x.Post {
			return "(" + paren(x.X) + x.Op.String() + ")"
		}
		return "(" + x.Op.String() + paren(x.X) + ")"
	case *ast.Ternary:
		if x.Then == nil {
			return "(" + paren(x.Cond) + " ?: " + paren(x.Else) + ")"
		}
		return "(" + paren(x.Cond) + " ? " + paren(x.Then) + " : " + paren(x.Else) + ")"
	case *ast.Field:
		if x.Arrow {
			return paren(x.X) + "->" + x.Name
		}
		return paren(x.X) + "." + x.Name
	case *ast.Index:
		return paren(x.X) + "[" + paren(x.I) + "]"
	case *ast.Tuple:
		if x.Names != nil {
			fields := make([]string, len(x.Elems))
			for i, e := range x.Elems {
				fields[i] = x.Names[i] + " = " + paren(e)
			}
			return "(" + strings.Join(fields, ", ") + ")"
		}
		return "(" + list(x.Elems) + ",)"
	case *ast.Cast:
		return "((" + typeString(x.Type) + ")" + paren(x.X) + ")"
	case *ast.Sizeof:
		if x.Type != nil {
			return "sizeof(type " + typeString(x.Type) + ")"
		}
		return "sizeof(" + paren(x.X) + ")"
	case *ast.TypeExpr:
		return "type " + typeString(x)
	case *ast.Offsetof:
		arg := "?"
		if x.Type != nil {
			arg = "type " + typeString(x.Type)
		} else {
			arg = paren(x.X)
		}
		return "offsetof(" + arg + ", " + strings.Join(x.Field, ".") + ")"
	}
	return fmt.Sprintf("%T", x)
}

func list(xs []ast.Expr) string {
	var s []string
	for _, x := range xs {
		s = append(s, paren(x))
	}
	return strings.Join(s, ", ")
}

func TestExpressions(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1 + 2 * 3", "(1 + (2 * 3))"},
		{"1 * 2 + 3", "((1 * 2) + 3)"},
		{"1 - 2 - 3", "((1 - 2) - 3)"},
		{"8 / 4 / 2 % 3", "(((8 / 4) / 2) % 3)"},
		{"1 << 2 + 3", "(1 << (2 + 3))"},
		{"1 < 2 == 3 > 4", "((1 < 2) == (3 > 4))"},
		{"1 & 2 == 2", "(1 & (2 == 2))"},
		{"1 | 2 ^ 3 & 4", "(1 | (2 ^ (3 & 4)))"},
		{"$a || $b && $c", "($a || ($b && $c))"},
		{"$a && $b || $c", "(($a && $b) || $c)"},
		{"$a == 1 || $b != 2 && $c <= 3", "(($a == 1) || (($b != 2) && ($c <= 3)))"},
		{"1 >= 2 >> 1", "(1 >= (2 >> 1))"},
		{"$a ? 1 : 2", "($a ? 1 : 2)"},
		{"$a ? 1 : $b ? 2 : 3", "($a ? 1 : ($b ? 2 : 3))"},
		{"$a || $b ? 1 + 2 : 3", "(($a || $b) ? (1 + 2) : 3)"},
		{"-1 + !$x * ~$y", "((-1) + ((!$x) * (~$y)))"},
		{"- -1", "(-(-1))"},
		{"*$p + 1", "((*$p) + 1)"},
		{"&$x", "(&$x)"},
		{"$x++ + ++$y", "(($x++) + (++$y))"},
		{"@x-- - --@y", "((@x--) - (--@y))"},
		{"(uint8)$x + 1", "(((uint8)$x) + 1)"},
		{"(struct task_struct *)curtask", "((struct task_struct *)curtask)"},
		{"(struct a **)0", "((struct a **)0)"},
		{"(int64[4])$x", "((int64[4])$x)"},
		{"(uint8 *)arg0", "((uint8 *)arg0)"},
		{"(pid) - 1", "(pid - 1)"},
		{"(1 + 2) * 3", "((1 + 2) * 3)"},
		{"($x) == 1", "($x == 1)"},
		{"(1, \"a\", $x)", "(1, \"a\", $x,)"},
		{"(1, (2, 3)).1.0", "(1, (2, 3,),).1.0"},
		{"$t.0", "$t.0"},
		{"args.x + args->y", "(args.x + args->y)"},
		{"$s->a.b[1]", "$s->a.b[1]"},
		{"@m[1, \"k\"]", "@m[1, \"k\"]"},
		{"@", "@"},
		{"@m[1][2]", "@m[1][2]"},
		{"f()", "f()"},
		{"printf(\"%d %s\\n\", pid, comm)", "printf(\"%d %s\\n\", pid, comm)"},
		{"$1 + $#", "($1 + $#)"},
		{"true && false", "(true && false)"},
		{"0x10 + 010 + 1_000 + 1e3 + 2us + 1ms", "(((((16 + 8) + 1000) + 1000) + 2000) + 1000000)"},
		{"123UL + 0X10 + 7LLU + 1m + 1d", "((((123 + 16) + 7) + 60000000000) + 86400000000000)"},
		{"0b101 + 0B1_0", "(5 + 2)"},
		{"sizeof(struct task_struct)", "sizeof(type struct task_struct)"},
		{"sizeof(uint32)", "sizeof(type uint32)"},
		{"sizeof($x)", "sizeof($x)"},
		{"sizeof(x)", "sizeof(x)"},
		{"offsetof(struct sk_buff, len)", "offsetof(type struct sk_buff, len)"},
		{"offsetof($s, a.b)", "offsetof($s, a.b)"},
		{"$a ?: 1", "($a ?: 1)"},
		{"$a ?: $b ?: 2", "($a ?: ($b ?: 2))"},
		{"$a || $b ?: 1 + 2", "(($a || $b) ?: (1 + 2))"},
		{"$a ? 1 : $b ?: 3", "($a ? 1 : ($b ?: 3))"},
		{"(int8[])12345", "((int8[])12345)"},
		{"((int8[8])$x)[0]", "((int8[8])$x)[0]"},
		{"(enum Foo)1", "((enum Foo)1)"},
		{"(typeof($x))1", "((typeof($x))1)"},
		{"(typeof(uint8) *)0", "((typeof(type uint8) *)0)"},
		{"sizeof(typeof(struct Foo))", "sizeof(type typeof(type struct Foo))"},
		{"sizeof(typeof($a[2]))", "sizeof(type typeof($a[2]))"},
		{"(a = 1, b = (c = \"s\"), d = (1, 2))", "(a = 1, b = (c = \"s\"), d = (1, 2,))"},
		{"(a=1).a", "(a = 1).a"},
		{"f(typeof(uint8 *), typeof($x))", "f(type typeof(type uint8 *), type typeof($x))"},
	}
	for _, tt := range tests {
		prog, errs := parse(t, "BEGIN { "+tt.src+"; }")
		if len(errs) > 0 {
			t.Errorf("%s: %s", tt.src, strings.Join(errs, "; "))
			continue
		}
		x := prog.Probes[0].Body.Stmts[0].(*ast.ExprStmt).X
		if got := paren(x); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

func dump(prog *ast.Program) string {
	var b bytes.Buffer
	dumpTree(&b, prog)
	return b.String()
}

func TestDump(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { printf("hi\n"); exit(); }`, `
Program
 BEGIN
  call: printf
   string: hi\n
  call: exit
`},
		{`kprobe:f, kretprobe:g /pid == 1/ { @x[tid] = count(); @y[1, comm] += 2; $v = args->x; @ = $t.0; }`, `
Program
 kprobe:f
 kretprobe:g
  pred
   ==
    identifier: pid
    int: 1
  =
   map: @x
    identifier: tid
   call: count
  +=
   map: @y
    tuple:
     int: 1
     identifier: comm
   int: 2
  =
   variable: $v
   ->
    identifier: args
    x
  =
   map: @
   .
    variable: $t
    0
`},
		{`BEGIN { let $a; let $b: uint8; let $c = 1; let $d: struct x * = 0 }`, `
Program
 BEGIN
  decl
   variable: $a
  decl :: [uint8]
   variable: $b
  decl
   variable: $c
   int: 1
  decl :: [struct x *]
   variable: $d
   int: 0
`},
		{`BEGIN { if ($x) { @a = 1 } else if $y { @b++ } else { break } }`, `
Program
 BEGIN
  if
   variable: $x
   then
    =
     map: @a
     int: 1
   else
    if
     variable: $y
     then
      ++ (post)
       map: @b
     else
      break
`},
		{`BEGIN { while ($i < 10) { $i++; continue; } unroll(4) { return } for ($kv : @m) { print($kv.0) } { @x = 1 } }`, `
Program
 BEGIN
  while(
   <
    variable: $i
    int: 10
   )
    ++ (post)
     variable: $i
    continue
  unroll
   int: 4
   block
    return
  for
   decl
    variable: $kv
    map: @m
   stmts
    call: print
     .
      variable: $kv
      0
  block
   =
    map: @x
    int: 1
`},
		{"#include <linux/sched.h>\nstruct S { int a; };\nconfig = { max_map_keys = 100; stack_mode = perf }\nEND { @x = (uint8)-1; @y = sizeof(struct S) ? $1 : $#; }", `
#include <linux/sched.h>
struct S { int a; };
Program
 config
  =
   var: max_map_keys
   int: 100
  =
   var: stack_mode
   identifier: perf
 END
  =
   map: @x
   (uint8)
    -
     int: 1
  =
   map: @y
   ?:
    sizeof: 
     struct S
    param: $1
    param: $#
`},
		{`BEGIN { $x = *&$y; @z[1] = offsetof(struct s, a.b); @w = "a\"\x01" }`, `
Program
 BEGIN
  =
   variable: $x
   dereference
    &
     variable: $y
  =
   map: @z
    int: 1
   offsetof: 
    struct s
    a
    b
  =
   map: @w
   string: a\"\x01
`},
	}
	for _, tt := range tests {
		got := dump(mustParse(t, tt.src))
		if want := strings.TrimPrefix(tt.want, "\n"); got != want {
			t.Errorf("%s\n got:\n%s\n want:\n%s", tt.src, got, want)
		}
	}
}

func TestStatements(t *testing.T) {
	// Semicolons are optional before '}' and after statements that end in
	// a block.
	for _, src := range []string{
		"BEGIN { @x = 1 }",
		"BEGIN { @x = 1; }",
		"BEGIN { if (1) { } @x = 1 }",
		"BEGIN { if (1) { }; @x = 1 }",
		"BEGIN { $x = 1; $x -= 1; $x *= 2; $x /= 2; $x %= 2; $x &= 1; $x |= 1; $x ^= 1; $x <<= 1; $x >>= 1 }",
		"BEGIN { @ = count(); @[1] = hist(2); delete(@, 1); clear(@) }",
		"BEGIN { {} { { @x = 1; } } }",
		"BEGIN\n{\n}\n\nEND\n{\n}",
		"kprobe:a,\n  kprobe:b,\n  kprobe:c\n{ }",
		"BEGIN { @x = 1 } END { clear(@x) }",
		"struct a { int x; } __attribute__((packed)) BEGIN { }",
		"struct a { int x; } /**/ __attribute__ /**/ ((packed)) __attribute__((aligned(1))) struct b { int y; } BEGIN { }",
		"",
		"// only a comment",
	} {
		mustParse(t, src)
	}
}

func TestSpans(t *testing.T) {
	src := "BEGIN { @x[pid] = 1 + (uint8)$y; }"
	prog := mustParse(t, src)
	var got []string
	ast.Inspect(prog, func(n ast.Node) bool {
		sp := n.Span()
		got = append(got, fmt.Sprintf("%T %q", n, src[sp.Start:sp.End]))
		return true
	})
	want := []string{
		`*ast.Program "BEGIN { @x[pid] = 1 + (uint8)$y; }"`,
		`*ast.Probe "BEGIN { @x[pid] = 1 + (uint8)$y; }"`,
		`*ast.AttachPoint "BEGIN"`,
		`*ast.Block "{ @x[pid] = 1 + (uint8)$y; }"`,
		`*ast.AssignStmt "@x[pid] = 1 + (uint8)$y"`,
		`*ast.Map "@x[pid]"`,
		`*ast.Ident "pid"`,
		`*ast.Binary "1 + (uint8)$y"`,
		`*ast.IntLit "1"`,
		`*ast.Cast "(uint8)$y"`,
		`*ast.TypeExpr "uint8"`,
		`*ast.Var "$y"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("spans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestInspectSkip(t *testing.T) {
	prog := mustParse(t, "BEGIN { @x = 1 + 2; } END { @y = 3; }")
	n := 0
	ast.Inspect(prog, func(node ast.Node) bool {
		n++
		_, isProbe := node.(*ast.Probe)
		return !isProbe
	})
	if n != 3 { // Program and two probes
		t.Errorf("Inspect visited %d nodes, want 3", n)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"BEGIN { x = ; }", "1:11-12: syntax error, unexpected =, expecting }"},
		{"BEGIN { @x = 1 ", "1:16-16: syntax error, unexpected end of file, expecting }"},
		{"BEGIN @x = 1; }", "1:7-9: syntax error, unexpected map, expecting {"},
		{"kprobe:f / pid { }", "1:16-17: syntax error, unexpected {, expecting end predicate"},
		{`BEGIN { printf("hi" 1); }`, `1:21-22: syntax error, unexpected integer, expecting ) or ","`},
		{"BEGIN { @x[1 = 2; }", `1:14-15: syntax error, unexpected =, expecting ] or ","`},
		{"BEGIN { $x = 1 ? 2 ; }", "1:20-21: syntax error, unexpected ;, expecting :"},
		{"BEGIN { ; }", "1:9-10: syntax error, unexpected ;, expecting }"},
		{"BEGIN { $x = if ($a) { 1 }; }", "1:27-28: syntax error, unexpected ;, expecting else"},
		// Recovery at ';' and '}' finds the errors of later statements
		// and probes.
		{"BEGIN { @a = ; @b = 1; @c = ) } END { @d = ]; }",
			"1:14-15: syntax error, unexpected ;; 1:29-30: syntax error, unexpected ); 1:44-45: syntax error, unexpected ]"},
		{"BEGIN { 1++; --f(); }",
			"1:9-10: increment/decrement requires a variable or map; 1:16-19: increment/decrement requires a variable or map"},
		{"BEGIN { $0; $99999999999999999999 }",
			"1:9-11: param $0 is out of integer range [1, 9223372036854775807]; 1:13-34: param $99999999999999999999 is out of integer range [1, 9223372036854775807]"},
		{"BEGIN { 18446744073709551616 }", "1:9-29: overflow error, maximum value is 18446744073709551615: 18446744073709551616"},
		{"BEGIN { 12e3; 0x; 5000000000u; }",
			"1:9-13: coefficient part of scientific literal must be 1-9: 12e3; 1:15-17: invalid integer: 0x; 1:19-30: overflow error, maximum value is 4294967295: 5000000000u"},
		{"BEGIN {} #include <x>", "1:10-22: C definitions must appear before probes"},
		{"BEGIN {} config = { a = 1 }", "1:10-16: config must appear before probes"},
		{"BEGIN { } }", "1:11-12: syntax error, unexpected }"},
		{"BEGIN { if (1) { } else @x = 1 }", "1:25-27: syntax error, unexpected map, expecting {"},
		{"BEGIN { for ($k : 1) { } }", "1:20-21: syntax error, unexpected ), expecting .."},
		{"BEGIN { for ($k : @m..2) { } }", "1:21-23: syntax error, unexpected .., expecting )"},
		{"BEGIN { let x; }", "1:13-14: syntax error, unexpected identifier, expecting variable"},
	}
	for _, tt := range tests {
		_, errs := parse(t, tt.src)
		if got := strings.Join(errs, "; "); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

func TestErrorLimit(t *testing.T) {
	src := strings.Repeat("BEGIN { @x = ; }\n", 50)
	_, errs := parse(t, src)
	if len(errs) != maxErrors {
		t.Errorf("got %d errors, want %d", len(errs), maxErrors)
	}
}

func TestDepthLimit(t *testing.T) {
	for name, src := range map[string]string{
		"parens":  "BEGIN { " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }",
		"unary":   "BEGIN { " + strings.Repeat("-", 100000) + "1 }",
		"blocks":  "BEGIN { " + strings.Repeat("{", 100000) + strings.Repeat("}", 100000) + " }",
		"ifs":     "BEGIN { " + strings.Repeat("if 1 { ", 100000) + strings.Repeat("}", 100000) + " }",
		"ternary": "BEGIN { 1" + strings.Repeat(" ? 1 : 1", 100000) + " }",
	} {
		_, errs := parse(t, src)
		want := fmt.Sprintf("nesting too deep: more than %d levels", maxDepth)
		if len(errs) != 1 || !strings.HasSuffix(errs[0], want) {
			t.Errorf("%s: got %q, want one error %q", name, errs, want)
		}
	}
	// Nesting within the limit is fine.
	mustParse(t, "BEGIN { $x = "+strings.Repeat("(", 50)+"1"+strings.Repeat(")", 50)+" }")
}

// TestTools parses the bpftrace tools installed on this machine, which use
// the older spellings (BEGIN, args->x, C preamble).
func TestTools(t *testing.T) {
	files, _ := filepath.Glob("/usr/sbin/*.bt")
	if len(files) == 0 {
		testutils.Skip(t, "no /usr/sbin/*.bt tools installed")
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("reading tool: %v", err)
			continue
		}
		f := token.NewFile(name, src)
		prog, errs := ParseFile(f)
		for _, e := range errs {
			pos := f.Position(e.Span.Start)
			t.Errorf("%s:%d:%d: %s", name, pos.Line, pos.Column, e.Msg)
		}
		if len(prog.Probes) == 0 {
			t.Errorf("%s: no probes parsed", name)
		}
	}
}

func FuzzParser(f *testing.F) {
	for _, src := range []string{
		"BEGIN { printf(\"%d\\n\", 1 + 2 * 3); exit(); }",
		"kprobe:f,\nkretprobe:g /pid == 1/ { @[comm, tid] = count(); $x = (uint8)args->y; }",
		"#include <x.h>\nstruct S { int a; };\nconfig = { x = 1 }\ni:s:1 { $t = (1, \"a\"); @ = $t.0; }",
		"BEGIN { if ($x) { } else if 1 { } while (1) { break } unroll(2) { } for ($kv : @m) { continue } }",
		"BEGIN { let $a: struct x * = 0; $b = sizeof(int64) + offsetof(struct s, a.b) ? $1 : $#; }",
		"BEGIN { @x = ; } END { ((((( }",
		"BEGIN { (struct",
		"macro m(x, $y, @z) { let $a = { x }; $y += $a; @z[1] = { { 1 } }; $a } BEGIN { $b = m(1, $c, @d); } macro n( {",
		"import \"a.bt\"; import \"b.h\";\nw:0x1000:8:rw,watchpoint:0x10:1:x,bench:a { $x = if ($1) { 1 } else if (2) { 3 } else { 4 }; }",
		"let $a: int32[4][2]; BEGIN { let $w: struct W[10]; $c = $a[$i][1 + 1]; $d = (int8[])\"x\"; @t = tseries(1, 1s, 5, \"max\"); }",
		"tracepoint:syscalls:sys_enter_$1,uprobe:$2:$3 { $c = config.max_strlen; $o = getopt(\"a\", -1, \"d\"); assert(1, \"x\"); }",
		"BEGIN { $x = if (1) { } else { 2 }; $y = if { }; import \"x\"; $z = config.; }",
	} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file := token.NewFile("fuzz.bt", []byte(src))
		prog, errs := ParseFile(file)
		within := func(what string, sp token.Span) {
			if sp.Start < 0 || sp.Start > sp.End || int(sp.End) > len(src) {
				t.Fatalf("%s span %v outside source of %d bytes", what, sp, len(src))
			}
		}
		for _, e := range errs {
			within("error "+e.Msg, e.Span)
		}
		if len(errs) > maxErrors {
			t.Fatalf("%d errors, limit is %d", len(errs), maxErrors)
		}
		ast.Inspect(prog, func(n ast.Node) bool {
			within(fmt.Sprintf("%T", n), n.Span())
			return true
		})
		if len(errs) == 0 {
			dump(prog)
		}
	})
}

// TestDiscardAndReturn checks `_ = expr` and `return expr`, and that a
// bare return ends at '}' or ';'.
func TestDiscardAndReturn(t *testing.T) {
	tests := []struct {
		src     string
		discard string // the discarded expression, or ""
		ret     string // the returned expression, "-" for a bare return, or ""
	}{
		{"_ = has_key(@a, 1)", "has_key(@a, 1)", ""},
		{"_ = $a ?: 2", "($a ?: 2)", ""},
		{"return $a + 1", "", "($a + 1)"},
		{"return", "", "-"},
		{"return;", "", "-"},
	}
	for _, tt := range tests {
		prog, errs := parse(t, "BEGIN { "+tt.src+" }")
		if len(errs) > 0 {
			t.Errorf("%s: %s", tt.src, strings.Join(errs, "; "))
			continue
		}
		switch s := prog.Probes[0].Body.Stmts[0].(type) {
		case *ast.ExprStmt:
			if !s.Discard || paren(s.X) != tt.discard {
				t.Errorf("%s: got discard=%v %s, want %s", tt.src, s.Discard, paren(s.X), tt.discard)
			}
		case *ast.JumpStmt:
			got := "-"
			if s.Value != nil {
				got = paren(s.Value)
			}
			if got != tt.ret {
				t.Errorf("%s: returns %s, want %s", tt.src, got, tt.ret)
			}
		default:
			t.Errorf("%s: got %T", tt.src, s)
		}
	}
}

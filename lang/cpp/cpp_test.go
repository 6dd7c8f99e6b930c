package cpp

import (
	"fmt"
	"strings"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// preprocess runs src through Preprocess and returns the expanded source,
// with the blanks at the ends of its lines trimmed, and the diagnostics
// rendered as gtrace prints them.
func preprocess(t *testing.T, src string) (out, errs string) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	res, list := Preprocess(f, nil)
	var b strings.Builder
	diag.Render(&b, f, list)
	if got, want := strings.Count(string(res.File.Src), "\n"), strings.Count(src, "\n"); got != want && len(list) == 0 {
		t.Errorf("the expanded source has %d lines, the source %d", got, want)
	}
	lines := strings.Split(string(res.File.Src), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n"), b.String()
}

func TestDirectives(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"no directives", "BEGIN { @x = 1; }", "BEGIN { @x = 1; }"},
		{"shebang kept", "#!/usr/bin/env bpftrace\nBEGIN { }", "#!/usr/bin/env bpftrace\nBEGIN { }"},
		{"object-like", "#define N 5\nBEGIN { @x = N * N; }", "\nBEGIN { @x = 5 * 5; }"},
		{"empty body", "#define NOTHING\nBEGIN { @x = 1 NOTHING; }", "\nBEGIN { @x = 1 ; }"},
		{"body with comment", "#define N 5 /* five */ // really\nBEGIN { @x = N; }", "\nBEGIN { @x = 5; }"},
		{"comment over lines in a directive", "#define N 5 /* one\ntwo */\nBEGIN { @x = N; }", "\n\nBEGIN { @x = 5; }"},
		{"continuation", "#define SUM 1 + \\\n  2\nBEGIN { @x = SUM; }", "\n\nBEGIN { @x = 1 + 2; }"},
		{"string body", "#define MSG \"hi N\"\nBEGIN { printf(MSG); }", "\nBEGIN { printf(\"hi N\"); }"},
		{"function-like", "#define SQ(x) ((x) * (x))\nBEGIN { @x = SQ(3); }", "\nBEGIN { @x = ((3) * (3)); }"},
		{"two parameters", "#define MAX(a, b) ((a) > (b) ? (a) : (b))\nBEGIN { @x = MAX(1, pid); }",
			"\nBEGIN { @x = ((1) > (pid) ? (1) : (pid)); }"},
		{"nested parentheses in arguments", "#define FIRST(a, b) a\nBEGIN { @x = FIRST(f(1, 2), 3); }", "\nBEGIN { @x = f(1, 2); }"},
		{"no parameters", "#define ONE() 1\nBEGIN { @x = ONE(); }", "\nBEGIN { @x = 1; }"},
		{"empty argument", "#define ID(x) [x]\nBEGIN { @x = ID(); }", "\nBEGIN { @x = []; }"},
		{"name alone is a name", "#define F(x) x\nBEGIN { @F = F; }", "\nBEGIN { @F = F; }"},
		{"space before ( makes it object-like", "#define F (x)\nBEGIN { @x = F; }", "\nBEGIN { @x = (x); }"},
		{"nested expansion", "#define A B + 1\n#define B C * 2\n#define C 3\nBEGIN { @x = A; }", "\n\n\nBEGIN { @x = 3 * 2 + 1; }"},
		{"defined later than used", "BEGIN { @x = N; }\n#define N 5\nEND { @y = N; }", "BEGIN { @x = N; }\n\nEND { @y = 5; }"},
		{"nested function-like", "#define SQ(x) ((x)*(x))\n#define QUAD(x) SQ(SQ(x))\nBEGIN { @x = QUAD(2); }",
			"\n\nBEGIN { @x = ((((2)*(2)))*(((2)*(2)))); }"},
		{"macro in argument", "#define N 4\n#define SQ(x) x*x\nBEGIN { @x = SQ(N); }", "\n\nBEGIN { @x = 4*4; }"},
		{"no recursion", "#define X X + 1\nBEGIN { @x = X; }", "\nBEGIN { @x = X + 1; }"},
		{"no mutual recursion", "#define A B\n#define B A\nBEGIN { @x = A; @y = B; }", "\n\nBEGIN { @x = A; @y = B; }"},
		{"no recursion through arguments", "#define F(x) F(x)\nBEGIN { @x = F(F(1)); }", "\nBEGIN { @x = F(F(1)); }"},
		{"redefine", "#define N 1\n#define N 2\nBEGIN { @x = N; }", "\n\nBEGIN { @x = 2; }"},
		{"undef", "#define N 1\nBEGIN { @x = N; }\n#undef N\nEND { @y = N; }", "\nBEGIN { @x = 1; }\n\nEND { @y = N; }"},
		{"undef unknown", "#undef N\nBEGIN { }", "\nBEGIN { }"},
		{"ifdef taken", "#define X\n#ifdef X\nBEGIN { }\n#endif", "\n\nBEGIN { }\n"},
		{"ifdef skipped", "#ifdef X\nBEGIN { }\n#endif", "\n\n"},
		{"ifndef", "#ifndef X\nBEGIN { }\n#endif", "\nBEGIN { }\n"},
		{"ifdef else", "#ifdef X\nBEGIN { @a = 1; }\n#else\nBEGIN { @b = 1; }\n#endif", "\n\n\nBEGIN { @b = 1; }\n"},
		{"if elif else", "#define V 2\n#if V == 1\n@a\n#elif V == 2\n@b\n#elif V == 2\n@c\n#else\n@d\n#endif",
			"\n\n\n\n@b\n\n\n\n\n"},
		{"if else taken", "#if 0\n@a\n#elif 0\n@b\n#else\n@c\n#endif", "\n\n\n\n\n@c\n"},
		{"nested conditionals", "#if 1\n#if 0\n@a\n#else\n@b\n#endif\n#endif", "\n\n\n\n@b\n\n"},
		{"nested in a skipped group", "#if 0\n#if 1\n@a\n#else\n@b\n#endif\n@c\n#else\n@d\n#endif",
			"\n\n\n\n\n\n\n\n@d\n"},
		{"skipped group is not read", "#if 0\nit's \"not\n#bogus\n#endif\nBEGIN { }", "\n\n\n\nBEGIN { }"},
		{"directive in a comment in a skipped group", "#if 0\n/*\n#endif\n*/\n#endif\n@a", "\n\n\n\n\n@a"},
		{"defined", "#define X\n#if defined(X) && defined Y == 0\n@a\n#endif", "\n\n@a\n"},
		{"unknown names are 0", "#if NOPE\n@a\n#else\n@b\n#endif", "\n\n\n@b\n"},
		{"arithmetic", "#if (1 + 2 * 3 - 4) / 3 % 2 == 1 && (1 << 4) == 16 && (-8 >> 1) == -4\n@a\n#endif", "\n@a\n"},
		{"bitwise", "#if (6 & 3) == 2 && (6 | 1) == 7 && (6 ^ 3) == 5 && ~0 == -1 && !0\n@a\n#endif", "\n@a\n"},
		{"comparison", "#if 1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2\n@a\n#endif", "\n@a\n"},
		{"ternary", "#if (0 ? 5 : 7) == 7\n@a\n#endif", "\n@a\n"},
		{"literals", "#if 0x10 == 16 && 010 == 8 && 10UL == 10 && 'a' == 97\n@a\n#endif", "\n@a\n"},
		{"short circuit", "#if 0 && 1 / 0\n@a\n#endif\n#if 1 || 1 / 0\n@b\n#endif", "\n\n\n\n@b\n"},
		{"macros in if", "#define V 3\n#define TWICE(x) ((x) * 2)\n#if TWICE(V) == 6\n@a\n#endif", "\n\n\n@a\n"},
		{"if continuation", "#if 1 && \\\n  0\n@a\n#endif", "\n\n\n"},
		{"BPFTRACE_HAVE_BTF", "#ifdef BPFTRACE_HAVE_BTF\n@a\n#endif\n#if BPFTRACE_HAVE_BTF\n@b\n#endif", "\n@a\n\n\n@b\n"},
		{"include defines constants", "#include <linux/sched.h>\nBEGIN { @x = TASK_INTERRUPTIBLE; }", "\nBEGIN { @x = 1; }"},
		{"include in quotes", "#include \"linux/sched.h\"\nBEGIN { @x = TASK_RUNNING; }", "\nBEGIN { @x = 0; }"},
		{"include through another header", "#include <sys/socket.h>\nBEGIN { @x = AF_INET6; }", "\nBEGIN { @x = 10; }"},
		{"constant without include", "BEGIN { @x = TASK_RUNNING; }", "BEGIN { @x = TASK_RUNNING; }"},
		{"header for types only", "#include <linux/blkdev.h>\nBEGIN { }", "\nBEGIN { }"},
		{"own define wins", "#define AF_INET 99\n#include <sys/socket.h>\nBEGIN { @x = AF_INET; }", "\n\nBEGIN { @x = 99; }"},
		{"negative constant", "#include <linux/fcntl.h>\nBEGIN { @x = 1-AT_FDCWD; }", "\nBEGIN { @x = 1-(-100); }"},
		{"null directive", "#\nBEGIN { }", "\nBEGIN { }"},
		{"indented directive", "  #  define N 1\nBEGIN { @x = N; }", "\nBEGIN { @x = 1; }"},
		{"directive in a probe body", "BEGIN {\n#ifdef BPFTRACE_HAVE_BTF\n  @a = 1;\n#else\n  @b = 1;\n#endif\n}",
			"BEGIN {\n\n  @a = 1;\n\n\n\n}"},
		{"not in strings", "#define N 5\nBEGIN { printf(\"N\\n\"); }", "\nBEGIN { printf(\"N\\n\"); }"},
		{"not in comments", "#define N 5\nBEGIN { // N\n/* N */ }", "\nBEGIN { // N\n/* N */ }"},
		{"not in attach points", "#define sched X\n#define sched_switch Y\ntracepoint:sched:sched_switch { @sched = sched; }",
			"\n\ntracepoint:sched:sched_switch { @sched = X; }"},
		{"not in variables and maps", "#define x 5\nBEGIN { $x = x; @x[$x] = x; }", "\nBEGIN { $x = 5; @x[$x] = 5; }"},
		{"in predicates", "#define PID 42\nkprobe:f /pid == PID/ { }", "\nkprobe:f /pid == 42/ { }"},
		{"in config", "#define LEN 64\nconfig = { max_strlen = LEN }\nBEGIN { }", "\nconfig = { max_strlen = 64 }\nBEGIN { }"},
		{"struct definitions kept", "#define T int\nstruct s { T a; };\nBEGIN { }", "\nstruct s { int a; };\nBEGIN { }"},
		{"keyword named macro", "#define unroll_count 2\nBEGIN { unroll(unroll_count) { } }", "\nBEGIN { unroll(2) { } }"},
		{"tokens kept apart", "#define NEG -1\n#define ID(x) x\nBEGIN { @x = 1-NEG; @y = ID(a)ID(b); }", "\n\nBEGIN { @x = 1- -1; @y = a b; }"},
		{"invocation over lines", "#define ADD(a, b) a + b\nBEGIN { @x = ADD(1,\n   2); @y = 3; }",
			"\nBEGIN { @x = 1 + 2\n     ; @y = 3; }"},
		{"error skipped", "#if 0\n#error no\n#endif\nBEGIN { }", "\n\n\nBEGIN { }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs := preprocess(t, tt.src)
			if errs != "" {
				t.Fatalf("errors:\n%s", errs)
			}
			if out != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", out, tt.want)
			}
		})
	}
}

func TestIncludes(t *testing.T) {
	src := "#include <linux/sched.h>\n#if 0\n#include <linux/fs.h>\n#endif\n#include \"net/sock.h\"\nBEGIN { }"
	res, errs := Preprocess(token.NewFile("stdin", []byte(src)), nil)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := fmt.Sprint(res.Includes); got != "[linux/sched.h net/sock.h]" {
		t.Errorf("includes: %s", got)
	}
}

// TestConstants checks the table: one entry per name, each citing its
// header, and every header that includes others naming ones that exist.
func TestConstants(t *testing.T) {
	seen := map[string]bool{}
	headers := map[string]bool{}
	for _, c := range constants {
		if seen[c.name] {
			t.Errorf("%s is listed twice", c.name)
		}
		seen[c.name] = true
		if !strings.HasSuffix(c.header, ".h") {
			t.Errorf("%s: header %q", c.name, c.header)
		}
		headers[c.header] = true
	}
	for h, ins := range includes {
		for _, in := range ins {
			if !headers[in] && includes[in] == nil {
				t.Errorf("%s brings in %s, which defines nothing", h, in)
			}
		}
	}
	for _, tc := range []struct {
		header, name string
		value        int64
	}{
		{"linux/sched.h", "TASK_RUNNING", 0},
		{"linux/sched.h", "PF_KTHREAD", 0x00200000},
		{"net/sock.h", "AF_INET", 2},
		{"net/sock.h", "TCP_CLOSE", 7},
		{"linux/time.h", "NSEC_PER_SEC", 1000000000},
		{"fcntl.h", "O_CREAT", 0100},
		{"linux/fs.h", "O_TRUNC", 01000},
		{"errno.h", "ENOENT", 2},
		{"signal.h", "SIGKILL", 9},
	} {
		found := false
		for _, c := range headerConstants(tc.header) {
			if c.name == tc.name {
				found = c.value == tc.value
			}
		}
		if !found {
			t.Errorf("#include <%s> does not define %s as %d", tc.header, tc.name, tc.value)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unterminated if", "#if 1\nBEGIN { }",
			"stdin:1:1-4: ERROR: unterminated #if\n#if 1\n~~~\n"},
		{"unterminated ifdef in a skipped group", "#ifdef X\nBEGIN { }",
			"stdin:1:1-7: ERROR: unterminated #ifdef\n#ifdef X\n~~~~~~\n"},
		{"else without if", "BEGIN { }\n#else",
			"stdin:2:1-6: ERROR: #else without #if\n#else\n~~~~~\n"},
		{"elif without if", "#elif 1",
			"stdin:1:1-6: ERROR: #elif without #if\n#elif 1\n~~~~~\n"},
		{"endif without if", "#endif",
			"stdin:1:1-7: ERROR: #endif without #if\n#endif\n~~~~~~\n"},
		{"else after else", "#if 1\n#else\n#else\n#endif",
			"stdin:3:1-6: ERROR: #else after #else\n#else\n~~~~~\n"},
		{"elif after else", "#if 0\n#else\n#elif 1\n#endif",
			"stdin:3:1-6: ERROR: #elif after #else\n#elif 1\n~~~~~\n"},
		{"unknown directive", "#pragma once",
			"stdin:1:1-8: ERROR: unknown preprocessor directive '#pragma'\n#pragma once\n~~~~~~~\n"},
		{"not a directive name", "#5",
			"stdin:1:1-3: ERROR: unknown preprocessor directive '#5'\n#5\n~~\n"},
		{"directive not at line start", "BEGIN { } #define X 1",
			"stdin:1:11-22: ERROR: a preprocessor directive must be at the start of a line\nBEGIN { } #define X 1\n          ~~~~~~~~~~~\n"},
		{"error directive", "#error no BTF here",
			"stdin:1:1-7: ERROR: #error no BTF here\n#error no BTF here\n~~~~~~\n"},
		{"define without name", "#define",
			"stdin:1:1-8: ERROR: #define expects a macro name\n#define\n~~~~~~~\n"},
		{"define number", "#define 5 6",
			"stdin:1:9-10: ERROR: macro names must be identifiers\n#define 5 6\n        ~\n"},
		{"define defined", "#define defined 1",
			"stdin:1:9-16: ERROR: 'defined' cannot be used as a macro name\n#define defined 1\n        ~~~~~~~\n"},
		{"bad parameter", "#define F(1) 1",
			"stdin:1:11-12: ERROR: macro parameters must be identifiers\n#define F(1) 1\n          ~\n"},
		{"missing comma", "#define F(a b) 1",
			"stdin:1:13-14: ERROR: expected ',' or ')' in the parameters of macro 'F'\n#define F(a b) 1\n            ~\n"},
		{"missing paren", "#define F(a, b",
			"stdin:1:1-8: ERROR: missing ')' in the parameters of macro 'F'\n#define F(a, b\n~~~~~~~\n"},
		{"duplicate parameter", "#define F(a, a) a",
			"stdin:1:14-15: ERROR: duplicate macro parameter 'a'\n#define F(a, a) a\n             ~\n"},
		{"variadic", "#define F(...) 1",
			"stdin:1:11-14: ERROR: variadic macros are not supported\n#define F(...) 1\n          ~~~\n"},
		{"stringify", "#define S(x) #x",
			"stdin:1:14-15: ERROR: the '#' operator is not supported in macros\n#define S(x) #x\n             ~\n"},
		{"paste", "#define P(a, b) a ## b",
			"stdin:1:19-21: ERROR: the '##' operator is not supported in macros\n#define P(a, b) a ## b\n                  ~~\n"},
		{"undef without name", "#undef",
			"stdin:1:1-7: ERROR: #undef expects a macro name\n#undef\n~~~~~~\n"},
		{"ifdef without name", "#ifdef\n#endif",
			"stdin:1:1-7: ERROR: #ifdef expects a macro name\n#ifdef\n~~~~~~\n"},
		{"bad include", "#include linux/sched.h",
			"stdin:1:1-9: ERROR: #include expects \"FILE\" or <FILE>\n#include linux/sched.h\n~~~~~~~~\n"},
		{"too few arguments", "#define F(a, b) a\nBEGIN { @x = F(1); }",
			"stdin:2:14-18: ERROR: macro 'F' takes 2 arguments, but 1 were given\nBEGIN { @x = F(1); }\n             ~~~~\n"},
		{"too many arguments", "#define F(a) a\nBEGIN { @x = F(1, 2); }",
			"stdin:2:14-21: ERROR: macro 'F' takes 1 argument, but 2 were given\nBEGIN { @x = F(1, 2); }\n             ~~~~~~~\n"},
		{"arguments to none", "#define F() 1\nBEGIN { @x = F(2); }",
			"stdin:2:14-18: ERROR: macro 'F' takes 0 arguments, but 1 were given\nBEGIN { @x = F(2); }\n             ~~~~\n"},
		{"wrong count in a nested call", "#define F(a) a\n#define G F(1, 2)\nBEGIN { @x = G; }",
			"stdin:3:14-15: ERROR: macro 'F' takes 1 argument, but 2 were given\nBEGIN { @x = G; }\n             ~\n"},
		{"unterminated invocation", "#define F(a) a\nBEGIN { @x = F(1; }",
			"stdin:2:14-15: ERROR: unterminated invocation of macro 'F'\nBEGIN { @x = F(1; }\n             ~\n"},
		{"directive in arguments", "#define F(a) a\nBEGIN { @x = F(1,\n#define G\n2); }",
			"stdin:3:1-2: ERROR: preprocessor directive in the arguments of macro 'F'\n#define G\n~\n"},
		{"if without expression", "#if\n#endif",
			"stdin:1:1-4: ERROR: #if with no expression\n#if\n~~~\n"},
		{"if with empty macro", "#define E\n#if E\n#endif",
			"stdin:2:1-4: ERROR: #if with no expression\n#if E\n~~~\n"},
		{"if division by zero", "#if 1 / 0\n#endif",
			"stdin:1:7-8: ERROR: division by zero in #if\n#if 1 / 0\n      ~\n"},
		{"if bad token", "#if 1 +\n#endif",
			"stdin:1:7-8: ERROR: #if expression ends early\n#if 1 +\n      ~\n"},
		{"if trailing token", "#if 1 2\n#endif",
			"stdin:1:7-8: ERROR: unexpected '2' in #if\n#if 1 2\n      ~\n"},
		{"if string", "#if \"a\"\n#endif",
			"stdin:1:5-8: ERROR: unexpected '\"a\"' in #if\n#if \"a\"\n    ~~~\n"},
		{"if bad integer", "#if 08\n#endif",
			"stdin:1:5-7: ERROR: invalid integer '08' in #if\n#if 08\n    ~~\n"},
		{"if missing paren", "#if (1\n#endif",
			"stdin:1:6-7: ERROR: expected ')' in #if expression\n#if (1\n     ~\n"},
		{"if missing colon", "#if 1 ? 2\n#endif",
			"stdin:1:9-10: ERROR: expected ':' in #if expression\n#if 1 ? 2\n        ~\n"},
		{"if shift", "#if 1 << 64\n#endif",
			"stdin:1:7-9: ERROR: shift count out of range in #if: 64\n#if 1 << 64\n      ~~\n"},
		{"if error from a macro", "#define Z (1/0)\n#if Z\n#endif",
			"stdin:2:5-6: ERROR: division by zero in #if\n#if Z\n    ~\n"},
		{"defined without name", "#if defined(1)\n#endif",
			"stdin:1:5-12: ERROR: 'defined' expects a macro name, as in defined(NAME)\n#if defined(1)\n    ~~~~~~~\n"},
		{"unterminated comment", "#define X /* never closed",
			"stdin:1:11-13: ERROR: unterminated comment\n#define X /* never closed\n          ~~\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := preprocess(t, tt.src)
			if errs != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", errs, tt.want)
			}
		})
	}
}

// TestTooManyErrors checks that preprocessing stops after maxErrors errors.
func TestTooManyErrors(t *testing.T) {
	src := strings.Repeat("#bad\n", 2*maxErrors)
	_, errs := Preprocess(token.NewFile("stdin", []byte(src)), nil)
	if len(errs) != maxErrors {
		t.Errorf("got %d errors, want %d", len(errs), maxErrors)
	}
}

// TestExpansionDepth checks the guard on nested expansions: a chain of
// macros one longer than maxDepth fails, one of maxDepth works.
func TestExpansionDepth(t *testing.T) {
	chain := func(n int) string {
		var b strings.Builder
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "#define M%d M%d\n", i, i+1)
		}
		fmt.Fprintf(&b, "#define M%d 1\nBEGIN { @x = M1; }", n)
		return b.String()
	}
	if out, errs := preprocess(t, chain(maxDepth)); errs != "" || !strings.HasSuffix(out, "@x = 1; }") {
		t.Errorf("a chain of %d: %s\n%s", maxDepth, errs, out)
	}
	_, errs := preprocess(t, chain(maxDepth+1))
	if want := fmt.Sprintf("ERROR: macro expansion nested too deeply: more than %d levels", maxDepth); !strings.Contains(errs, want) {
		t.Errorf("got %s, want %s", errs, want)
	}
}

// doubling defines D0 as a name of 1000 bytes, and each of D1 to Dn as
// two of the one before, so that Dn is 2^n names long.
func doubling(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#define D0 %s\n", strings.Repeat("x", 1000))
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "#define D%d D%d D%d\n", i, i-1, i-1)
	}
	return b.String()
}

// TestExpansionSize checks the guard on the size of one expansion: D40
// would be 2^40 names long.
func TestExpansionSize(t *testing.T) {
	_, errs := preprocess(t, doubling(40)+"BEGIN { @x = D40; }")
	if want := fmt.Sprintf("ERROR: macro expansion too large: more than %d bytes", maxOutput); !strings.Contains(errs, want) {
		t.Errorf("got %s, want %s", errs, want)
	}
	// The same chain, used within bounds, is fine.
	if _, errs = preprocess(t, doubling(40)+"BEGIN { @x = D5; }"); errs != "" {
		t.Error(errs)
	}
}

// TestExpansionCount checks the guard on the number of invocations: each
// macro calls the one before twice, and the first expands to nothing, so
// the output stays empty while the work doubles.
func TestExpansionCount(t *testing.T) {
	var b strings.Builder
	b.WriteString("#define E0\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "#define E%d E%d E%d\n", i, i-1, i-1)
	}
	_, errs := preprocess(t, b.String()+"BEGIN { E40 }")
	if want := fmt.Sprintf("ERROR: too many macro expansions: more than %d", maxExpansions); !strings.Contains(errs, want) {
		t.Errorf("got %s, want %s", errs, want)
	}
	if _, errs = preprocess(t, b.String()+"BEGIN { E10 }"); errs != "" {
		t.Error(errs)
	}
}

// TestOutputSize checks the guard on the size of the whole expanded
// script: each expansion is within bounds, but together they are not.
func TestOutputSize(t *testing.T) {
	_, errs := preprocess(t, doubling(9)+"BEGIN { @x = D9; @y = D9; @z = D9; }")
	if want := fmt.Sprintf("ERROR: the expanded script is too large: more than %d bytes", maxOutput); !strings.Contains(errs, want) {
		t.Errorf("got %s, want %s", errs, want)
	}
}

// TestIfDepth checks the guard on the nesting of #if expressions.
func TestIfDepth(t *testing.T) {
	nest := func(n int) string {
		return "#if " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n@a\n#endif"
	}
	// Each parenthesis is two levels: the expression in it and the operand.
	if out, errs := preprocess(t, nest(maxExprDepth/2-1)); errs != "" || out != "\n@a\n" {
		t.Errorf("%d parentheses: %q %s", maxExprDepth/2-1, out, errs)
	}
	_, errs := preprocess(t, nest(maxExprDepth))
	if want := fmt.Sprintf("ERROR: #if expression nested too deeply: more than %d levels", maxExprDepth); !strings.Contains(errs, want) {
		t.Errorf("got %s, want %s", errs, want)
	}
	_, errs = preprocess(t, "#if "+strings.Repeat("1 ? 1 : ", 2*maxExprDepth)+"1\n#endif")
	if !strings.Contains(errs, "nested too deeply") {
		t.Errorf("deep ?: got %s", errs)
	}
}

// TestPositions checks that errors found after preprocessing point at
// the original source.
func TestPositions(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"after an expansion on the same line", "#define SQ(x) ((x) * (x))\nBEGIN { @a = SQ(2) + SQ(3); @b = ; }",
			"stdin:2:34-35: ERROR: syntax error, unexpected ;\nBEGIN { @a = SQ(2) + SQ(3); @b = ; }\n                                 ~\n"},
		{"inside an expansion", "#define BAD )\nBEGIN {\n\t@a = BAD;\n}",
			"stdin:3:7-10: ERROR: syntax error, unexpected )\n    @a = BAD;\n         ~~~\n"},
		{"after a skipped group", "#if 0\nnot bpftrace\n#endif\nBEGIN { @b = ; }",
			"stdin:4:14-15: ERROR: syntax error, unexpected ;\nBEGIN { @b = ; }\n             ~\n"},
		{"after an invocation over lines", "#define ADD(a, b) a + b\nBEGIN { @x = ADD(1,\n   2222222); @y = ; }",
			"stdin:3:19-20: ERROR: syntax error, unexpected ;\n   2222222); @y = ; }\n                  ~\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := token.NewFile("stdin", []byte(tt.src))
			res, errs := Preprocess(f, nil)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			_, errs = parser.ParseFile(res.File)
			var b strings.Builder
			diag.Render(&b, f, res.Errors(errs))
			if b.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

func TestSpan(t *testing.T) {
	// "LONG" is at 0..4 of line, after "BEGIN{", and expands to 11 bytes.
	src := "#define LONG 1234567890X\nBEGIN{LONG + ab}"
	res, errs := Preprocess(token.NewFile("stdin", []byte(src)), nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	line := 31 // offset of "LONG", in both texts
	if got := string(res.File.Src[line:]); got != "1234567890X + ab}" {
		t.Fatalf("expanded %q", got)
	}
	sp := func(s, e int) token.Span { return token.Span{Start: token.Pos(s), End: token.Pos(e)} }
	for _, tc := range []struct{ in, want token.Span }{
		{sp(0, 7), sp(0, 7)},                       // before
		{sp(line, line+11), sp(line, line+4)},      // the expansion
		{sp(line+3, line+5), sp(line, line+4)},     // inside it
		{sp(line+14, line+16), sp(line+7, line+9)}, // "ab" after it
		{sp(line+11, line+11), sp(line+4, line+4)}, // empty, right after it
		{sp(line, line+16), sp(line, line+9)},      // over it
		{token.Span{Start: token.NoPos, End: token.NoPos}, token.Span{Start: token.NoPos, End: token.NoPos}},
	} {
		if got := res.Span(tc.in); got != tc.want {
			t.Errorf("Span(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

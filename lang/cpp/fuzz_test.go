package cpp

import (
	"strings"
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// FuzzPreprocess checks that any input preprocesses without a panic, that
// the expansion keeps the line count, that every span maps back into the
// source in order, and that a script with nothing to expand or import is
// left alone.
// The seeds run as ordinary tests.
func FuzzPreprocess(f *testing.F) {
	for _, seed := range []string{
		"",
		"#",
		"#!/usr/bin/env bpftrace\nBEGIN { }",
		"#define N 5\nBEGIN { @x = N; }",
		"#define SQ(x) ((x) * (x))\nBEGIN { @x = SQ(SQ(2)); }",
		"#define F(a, b) a b\nBEGIN { @x = F(1,\n 2); }",
		"#define A B\n#define B A\nBEGIN { @x = A; }",
		"#if defined(X) || 1 + 2 * 3 == 7\n@a\n#elif 1 / 0\n#else\n#endif",
		"#ifdef BPFTRACE_HAVE_BTF\n#include <sys/socket.h>\n#else\n#include <net/sock.h>\n#endif\nBEGIN { @x = AF_INET; }",
		"#include <linux/sched.h>\ntracepoint:sched:sched_switch /args.prev_state == TASK_RUNNING/ { }",
		"BEGIN {\n#if 0\n}\n#endif\n}",
		"#define X /* a\ncomment */ 1\n#if X\n#endif",
		"#define S \"a\\\"b\"\nBEGIN { printf(S); }",
		"#if 0\n/*\n#endif\n*/\n#endif",
		"#define F(x) x\nBEGIN { F(\n#if 1\n) }",
		"#define D1 x x\n#define D2 D1 D1\nBEGIN { D2 }",
		"BEGIN { } #define X",
		"#if (((1)))\n#endif\n#if 1 ? 2 : 3\n#endif",
		"#define NEG -1\nBEGIN { @x = 1-NEG; }",
		"#undef\n#define\n#include\n#if\n#elif\n#else\n#endif",
		"#include \"nosuch.h\"\n#include <lol/no.h>\n#include </dev/null>\nBEGIN { }",
		"#include <linux/blkdev.h>\n#include \"testdata\"\nBEGIN { }",
		"#include \"doc.go\"\nBEGIN { }",
		"#define TS(x) tseries(x, 1s, 5)\n#define OPT getopt(\"a\", 1)\nBEGIN { @t = TS(OPT); print(config.max_strlen); }",
		"#define W watchpoint:0x1000:8:w\nW { }\nimport \"a.bt\";\n#define P(a) pton(a)\nBEGIN { $x = P(\"1.2.3.4\"); }",
		"#define IF(c, a, b) if (c) { a } else { b }\nBEGIN { $x = IF(1, 2, 3); $y = IF(,,); }",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file := token.NewFile("fuzz.bt", []byte(src))
		res, errs := Preprocess(file, nil)
		out := string(res.File.Src)
		if len(errs) > 0 {
			return
		}
		if got, want := strings.Count(out, "\n"), strings.Count(src, "\n"); got != want {
			t.Fatalf("%d lines, want %d\n%q", got, want, out)
		}
		if !strings.Contains(src, "#") && !strings.Contains(src, "BPFTRACE_HAVE_BTF") && !strings.Contains(src, "import") && out != src {
			t.Fatalf("changed a script with no directives:\n%q\n%q", src, out)
		}
		last := 0
		for off := 0; off <= len(out); off++ {
			sp := res.Span(token.Span{Start: token.Pos(off), End: token.Pos(off)})
			if int(sp.Start) < last || int(sp.Start) > len(src) {
				t.Fatalf("offset %d maps to %d, after %d, in %d bytes", off, sp.Start, last, len(src))
			}
			last = int(sp.Start)
		}
		_, perrs := parser.ParseFile(res.File)
		for _, e := range res.Errors(perrs) {
			size := len(src)
			if e.File != nil {
				size = len(e.File.Src) // an included file
			}
			if e.Span.Start < 0 || e.Span.End < e.Span.Start || int(e.Span.End) > size {
				t.Fatalf("error %q at %v, outside the %d bytes of its source", e.Msg, e.Span, size)
			}
		}
	})
}

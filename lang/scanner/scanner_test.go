package scanner

import (
	"fmt"
	"strings"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// tags abbreviates the kinds that carry a literal in test strings.
var tags = map[token.Kind]string{
	token.IDENT: "ident", token.INT: "int", token.STRING: "str", token.VAR: "var",
	token.POSITIONAL: "pos", token.MAP: "map", token.PROBE: "probe",
	token.CPREPROC: "cpp",
}

// scanAll renders the tokens of src as "tag(lit)" for literals and the
// text for operators and keywords, and the errors as "line:col-col: msg".
func scanAll(t testing.TB, src string) (toks, errs string) {
	f := token.NewFile("test.bt", []byte(src))
	var list diag.List
	var s Scanner
	s.Init(f, &list)
	var out []string
	for {
		kind, lit, sp := s.Scan()
		if sp.Start < 0 || sp.Start > sp.End || int(sp.End) > len(src) {
			t.Fatalf("token %v %q: span %v outside source of %d bytes", kind, lit, sp, len(src))
		}
		if kind == token.EOF {
			break
		}
		switch tag, ok := tags[kind]; {
		case kind == token.STRING:
			out = append(out, fmt.Sprintf("str(%q)", lit))
		case ok:
			out = append(out, tag+"("+lit+")")
		default:
			out = append(out, lit)
		}
		if len(out) > 10000 {
			t.Fatalf("scanner does not reach EOF")
		}
	}
	var es []string
	for _, e := range list {
		b, end := f.Position(e.Span.Start), f.Position(e.Span.End)
		es = append(es, fmt.Sprintf("%d:%d-%d: %s", b.Line, b.Column, end.Column, e.Msg))
	}
	return strings.Join(out, " "), strings.Join(es, "; ")
}

func TestScan(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"BEGIN { }", "probe(BEGIN) { }"},
		{"begin{}end{}", "probe(begin) { } probe(end) { }"},
		{"uprobe:/bin/bash:readline { }", "probe(uprobe:/bin/bash:readline) { }"},
		{"interval:s:1,\n  tracepoint:syscalls:sys_enter_* /pid == 1/ {}",
			"probe(interval:s:1) , probe(tracepoint:syscalls:sys_enter_*) / ident(pid) == int(1) / { }"},
		{"kprobe:vfs_read+0x10,kretprobe:vfs_read{}", "probe(kprobe:vfs_read+0x10) , probe(kretprobe:vfs_read) { }"},
		{`uprobe:"/a b":f {}`, `probe(uprobe:"/a b":f) { }`},
		{"BEGIN/1/{}", "probe(BEGIN) / int(1) / { }"},
		{"BEGIN /f(a, b)/ {}", "probe(BEGIN) / ident(f) ( ident(a) , ident(b) ) / { }"},
		{"#!/usr/bin/env bpftrace\nBEGIN {}", "probe(BEGIN) { }"},
		{"#include <linux/fs.h>  \n#define X \\\n  1\nBEGIN {}",
			"cpp(#include <linux/fs.h>) cpp(#define X \\\n  1) probe(BEGIN) { }"},
		{"struct S { int a; };\nBEGIN {}", "struct ident(S) { ident(int) ident(a) ; } ; probe(BEGIN) { }"},
		{"struct:probe {}", "probe(struct:probe) { }"},
		{"config = { a = 1 }\nBEGIN {}", "config = { ident(a) = int(1) } probe(BEGIN) { }"},
		{"config:x {}", "probe(config:x) { }"},
		{"import \"a.bt\";\nimport \"b\"; BEGIN {}", `ident(import) str("a.bt") ; ident(import) str("b") ; probe(BEGIN) { }`},
		{"import:x {}", "probe(import:x) { }"},
		{"// c\nBEGIN /* c */ { // c\n }", "probe(BEGIN) { }"},
		{"BEGIN { $x $1 $# $12 @ @m @_x1 }",
			"probe(BEGIN) { var($x) pos($1) pos($#) pos($12) map(@) map(@m) map(@_x1) }"},
		{"BEGIN { 0 42 0x2A 1_000 0777 1e6 10ms 5s 3u 4ull 7LL }",
			"probe(BEGIN) { int(0) int(42) int(0x2A) int(1_000) int(0777) int(1e6) int(10ms) int(5s) int(3u) int(4ull) int(7LL) }"},
		{`BEGIN { "a\n\t\\\"\x41\101\0" }`, `probe(BEGIN) { str("a\n\t\\\"AA\x00") }`},
		{"BEGIN { if else while for unroll break continue return let sizeof offsetof true false struct union enum }",
			"probe(BEGIN) { if else while for unroll break continue return let sizeof offsetof true false struct union enum }"},
		{"BEGIN { ( ) [ ] , ; : . -> ? }", "probe(BEGIN) { ( ) [ ] , ; : . -> ? }"},
		{"BEGIN { = += -= *= /= %= &= |= ^= <<= >>= }", "probe(BEGIN) { = += -= *= /= %= &= |= ^= <<= >>= }"},
		{"BEGIN { + - * / % & | ^ << >> && || ! ~ ++ -- == != < <= > >= }",
			"probe(BEGIN) { + - * / % & | ^ << >> && || ! ~ ++ -- == != < <= > >= }"},
		{"BEGIN { $t.0.1 args->x args.y }", "probe(BEGIN) { var($t) . int(0) . int(1) ident(args) -> ident(x) ident(args) . ident(y) }"},
		{"BEGIN { { } } END { }", "probe(BEGIN) { { } } probe(END) { }"},
	}
	for _, tt := range tests {
		got, errs := scanAll(t, tt.src)
		if got != tt.want || errs != "" {
			t.Errorf("Scan(%q)\n got  %s\n want %s\n errors: %s", tt.src, got, tt.want, errs)
		}
	}
}

func TestScanErrors(t *testing.T) {
	tests := []struct {
		src, errs string
	}{
		{`BEGIN { "abc`, "1:9-13: unterminated string"},
		{"BEGIN { \"ab\ncd\" }", "1:9-12: unterminated string; 2:3-6: unterminated string"},
		{`BEGIN { "\q" }`, `1:10-12: invalid escape character '\q'`},
		{`BEGIN { "\x" }`, "1:10-12: invalid hex escape sequence"},
		{`BEGIN { "\777" }`, `1:10-14: octal escape sequence out of range '\777'`},
		{"BEGIN { 1_ }", "1:10-11: trailing underscore in integer literal"},
		{"BEGIN { 12abc }", "1:11-14: invalid integer suffix 'abc'"},
		{"BEGIN { $ }", "1:9-10: invalid character '$'"},
		{"BEGIN { ` }", "1:9-10: invalid character '`'"},
		{"BEGIN { } /* x", "1:11-15: end of file during comment"},
		{`uprobe:"x {}`, "1:1-13: unterminated string"},
	}
	for _, tt := range tests {
		if _, errs := scanAll(t, tt.src); errs != tt.errs {
			t.Errorf("Scan(%q) errors\n got  %s\n want %s", tt.src, errs, tt.errs)
		}
	}
}

func TestSaveRestore(t *testing.T) {
	f := token.NewFile("test.bt", []byte("a:b { @x = 1 }"))
	var errs diag.List
	var s Scanner
	s.Init(f, &errs)
	s.Scan()
	saved := s
	k1, l1, _ := s.Scan()
	s = saved
	k2, l2, _ := s.Scan()
	if k1 != k2 || l1 != l2 {
		t.Errorf("after restore got %v %q, want %v %q", k2, l2, k1, l1)
	}
}

func FuzzScanner(f *testing.F) {
	for _, src := range []string{
		"BEGIN { printf(\"%d\\n\", 1); }",
		"kprobe:f,\nkretprobe:g /pid == 1/ { @[comm] = count(); }",
		"#include <x.h>\nstruct S { int a; };\nconfig = { x = 1 }\ni:s:1 { exit() }",
		`uprobe:"/bin/ba sh":readline { $x = "\x41\101\q"; }`,
		"BEGIN { 0x1f 1e6 10ms 1_ 12abc $ ` }",
		"BEGIN { /* unterminated",
		"w:0x1000:8:rw { $a = 1s + 10ms + 2us + 3ns; $b = 18446744073709551615; $c = 18446744073709551616; $d = 1u + 2ul + 3l; }",
		"import \"x.bt\"; tracepoint:syscalls:sys_enter_$1 { $t[0][1] = $2 ; }",
	} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		scanAll(t, src)
	})
}

// manyComments is a probe whose body holds n block comments.
func manyComments(n int) string {
	return "BEGIN { " + strings.Repeat("/* */ ", n) + "exit(); }"
}

// TestManyComments checks that a script of many block comments scans to
// the end: each comment used to copy the rest of the source.
func TestManyComments(t *testing.T) {
	got, errs := scanAll(t, manyComments(80000))
	if want := "probe(BEGIN) { ident(exit) ( ) ; }"; got != want || errs != "" {
		t.Errorf("got %s, want %s; errors: %s", got, want, errs)
	}
}

func BenchmarkBlockComments(b *testing.B) {
	src := manyComments(80000)
	for i := 0; i < b.N; i++ {
		scanAll(b, src)
	}
}

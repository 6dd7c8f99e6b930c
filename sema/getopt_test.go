package sema

import (
	"strings"
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// checkWith checks src with the given positional parameters and program
// options, and returns the type of map @x and the errors.
func checkWith(t *testing.T, src string, params, named []string) (string, string) {
	t.Helper()
	prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(src)))
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	cfg := DefaultConfig()
	cfg.Params, cfg.Named = params, named
	info, errs := Check(prog, fakeOptions(cfg))
	if errs.HasErrors() {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Msg)
		}
		return "", strings.Join(msgs, "\n")
	}
	return info.Maps["@x"].Value.String(), ""
}

// TestCompileTimeValues checks what getopt(), positional parameters and
// config stand for: their types, and the errors of their misuse.
func TestCompileTimeValues(t *testing.T) {
	tests := []struct {
		name, src     string
		params, named []string
		typ, err      string
	}{
		{name: "bool option", src: `BEGIN { @x = getopt("dd"); }`, typ: "bool"},
		{name: "bool option given", src: `BEGIN { @x = getopt("dd"); }`, named: []string{"dd"}, typ: "bool"},
		{name: "unsigned option", src: `BEGIN { @x = getopt("aa", 20); }`, named: []string{"aa=0xffffffffffffffff"}, typ: "uint64"},
		{name: "signed option", src: `BEGIN { @x = getopt("bb", -1, "the b"); }`, named: []string{"bb=-10"}, typ: "int64"},
		{name: "string option", src: `BEGIN { @x = getopt("cc", "hello"); }`, named: []string{"cc=bye"}, typ: "string[4]"},
		{name: "option as print's top", src: `BEGIN { @x = 1; print(@x, getopt("top", 10), getopt("div", -1)); }`, named: []string{"top=3"}, typ: "int8"},
		{name: "string option as print's top", src: `BEGIN { @x = 1; print(@x, getopt("top", "s")); }`,
			err: "print(): top and div must be constant integers"},
		{name: "same option twice", src: `BEGIN { @x = getopt("aa", 1, "A") + getopt("aa", 1); }`, typ: "uint64"},
		{name: "bad integer", src: `BEGIN { @x = getopt("aa", 10); }`, named: []string{"aa=False"},
			err: "program command line option --aa invalid integer (value: False)"},
		{name: "integer out of range", src: `BEGIN { @x = getopt("aa", -10); }`, named: []string{"aa=9223372036854775808"},
			err: "program command line option --aa value is out of range (value: 9223372036854775808)"},
		{name: "bad bool", src: `BEGIN { @x = getopt("aa", true); }`, named: []string{"aa=maybe"},
			err: "program command line option --aa expects a boolean (e.g. 'true') (value: maybe)"},
		{name: "string without a value", src: `BEGIN { @x = getopt("aa", "s"); }`, named: []string{"aa"},
			err: "program command line option --aa expects a string (value: true)"},
		{name: "name not a literal", src: `BEGIN { $n = "a"; @x = getopt($n); }`, err: "First argument to 'getopt' must be a string literal."},
		{name: "default not a literal", src: `BEGIN { @x = getopt("a", pid); }`,
			err: "Second argument to 'getopt' must be a string literal, integer literal, or a boolean literal."},
		{name: "too many arguments", src: `BEGIN { @x = getopt("a", 1, "d", 4); }`,
			err: "The 'getopt' function can take a maximum of three arguments and a minimum of one argument."},
		{name: "other defaults", src: `BEGIN { @x = getopt("a", 1); @y = getopt("a", 2); }`,
			err: "Command line option 'a' needs to have the same default value in all places it is used. Previous default value: 1"},
		{name: "other descriptions", src: `BEGIN { @x = getopt("a", 1, "one"); @y = getopt("a", 1, "two"); }`,
			err: "Command line option 'a' must have the same description in all places it's used. Hint: You can wrap it in a macro"},
		{name: "number", src: `BEGIN { @x = $1; }`, params: []string{"0x10"}, typ: "int64"},
		{name: "huge number", src: `BEGIN { @x = $1; }`, params: []string{"0xffffffffffffffff"}, typ: "uint64"},
		{name: "negative number", src: `BEGIN { @x = $1; }`, params: []string{"-5"}, typ: "int64"},
		{name: "text", src: `BEGIN { @x = $1; }`, params: []string{"hello"}, typ: "string[6]"},
		{name: "number as text", src: `BEGIN { @x = str($1); }`, params: []string{"1"}, typ: "string[2]"},
		{name: "text from an offset", src: `BEGIN { @x = str($1 + 1); }`, params: []string{"hello"}, typ: "string[5]"},
		{name: "text cut short", src: `BEGIN { @x = str($1, 2); }`, params: []string{"hello"}, typ: "string[3]"},
		{name: "kaddr of a parameter", src: `BEGIN { @x = kaddr(str($1)); }`, params: []string{"jiffies"}, typ: "uint64"},
		{name: "attach point", src: `interval:s:$1 { @x = 1; }`, params: []string{"1"}, typ: "int8"},
		{name: "probe name", src: `BEG$1 { @x = 1; }`, params: []string{"IN"}, typ: "int8"},
		{name: "whole attach point", src: `$1 { @x = 1; }`, params: []string{"BEGIN"}, typ: "int8"},
		{name: "bad attach point", src: `interval:s:$a { @x = 1; }`,
			err: `invalid trailing character for positional param: a. Try quoting this entire part if this is intentional e.g. "$a".`},
		{name: "config record", src: `BEGIN { @x = config.max_strlen + config().on_stack_limit; }`, typ: "int64"},
		{name: "too many programs", src: `config = { max_bpf_progs = 1 } BEGIN { @x = 1; } END { @x = 2; }`,
			err: "Your program is trying to generate more than 1 BPF programs, which exceeds the current limit of 1; " +
				"you can increase the limit through the BPFTRACE_MAX_BPF_PROGS environment variable."},
		{name: "unstable feature refused", src: `config = { unstable_tseries = error } BEGIN { @x = tseries(1, 1s, 5); }`,
			err: "tseries feature is not enabled by default. To enable this unstable feature, set the config flag to enable. unstable_tseries=enable"},
		{name: "unstable feature enabled", src: `config = { unstable_tseries = enable } BEGIN { @x = tseries(1, 1s, 5); }`, typ: "tseries_t"},
		{name: "config string", src: `BEGIN { @x = __builtin_config.stack_mode; }`, typ: "string[9]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, err := checkWith(t, tt.src, tt.params, tt.named)
			if err != tt.err || typ != tt.typ {
				t.Errorf("type %q, errors %q; want %q, %q", typ, err, tt.typ, tt.err)
			}
		})
	}
}

// TestMissingParameter checks that a positional parameter not given is
// 0, with a warning at it.
func TestMissingParameter(t *testing.T) {
	prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(`BEGIN { @x = $2; }`)))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	cfg := DefaultConfig()
	cfg.Params = []string{"1"}
	info, errs := Check(prog, fakeOptions(cfg))
	if errs.HasErrors() || len(errs) != 1 || errs[0].Msg != "Positional parameter $2 is empty or not provided." {
		t.Fatalf("diagnostics %v, want one warning", errs)
	}
	if got := info.Maps["@x"].Value.String(); got != "int64" {
		t.Errorf("type %s, want int64", got)
	}
}

// TestUnstableWarning checks that an unstable feature used twice, with
// its setting at its default, warn, is one warning.
func TestUnstableWarning(t *testing.T) {
	prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(`BEGIN { @a = tseries(1, 1s, 5); @b = tseries(2, 1s, 5); }`)))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	_, errs = Check(prog, fakeOptions(DefaultConfig()))
	want := "Script is using an unstable feature: tseries. To prevent this warning you must explicitly enable it in the config e.g. unstable_tseries=enable"
	if len(errs) != 1 || !errs[0].Warning || errs[0].Msg != want {
		t.Errorf("diagnostics %v, want the one warning %q", errs, want)
	}
}

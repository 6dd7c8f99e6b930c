package main

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want options
	}{
		{[]string{"-e", "BEGIN {}", "a", "b"}, options{program: "BEGIN {}", params: []string{"a", "b"}, format: "text"}},
		{[]string{"script.bt", "7"}, options{filename: "script.bt", params: []string{"7"}, format: "text"}},
		{[]string{"-lv", "t:syscalls:*"}, options{list: true, listVerbose: true, listPattern: "t:syscalls:*", format: "text"}},
		{[]string{"-l"}, options{list: true, format: "text"}},
		{[]string{"-f", "json", "-o", "out", "-q", "-v", "-e", "x"}, options{program: "x", format: "json", outFile: "out", quiet: true, verbose: true}},
		{[]string{"-c", "ls -l", "--dry-run", "--unsafe", "-d", "ast", "-e", "x"},
			options{program: "x", command: "ls -l", dryRun: true, unsafe: true, debug: debugStages{ast: true}, format: "text"}},
		{[]string{"-p", "42", "--dry-run", "-e", "x"}, options{program: "x", pid: 42, dryRun: true, format: "text"}},
		{[]string{"-e", "x", "--", "-1"}, options{program: "x", params: []string{"-1"}, format: "text"}},
		{[]string{"-e", "x", "p1", "--", "--aa=20", "p2", "--dd"},
			options{program: "x", params: []string{"p1", "p2"}, named: []string{"aa=20", "dd"}, format: "text"}},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("parseArgs(%q) = %+v, want %+v", tt.args, *got, tt.want)
		}
	}
}

// TestDebugStages checks -d as bpftrace v0.26 takes it: repeated, comma
// separated, as --debug, with "all", and with its stages that gtrace has
// no output for refused with a reason.
func TestDebugStages(t *testing.T) {
	tests := []struct {
		args []string
		want debugStages
		err  string
	}{
		{[]string{"-d", "ast"}, debugStages{ast: true}, ""},
		{[]string{"-d", "codegen"}, debugStages{codegen: true}, ""},
		{[]string{"-d", "all"}, debugStages{ast: true, codegen: true}, ""},
		{[]string{"-d", "ast", "-d", "codegen"}, debugStages{ast: true, codegen: true}, ""},
		{[]string{"-d", "codegen,ast"}, debugStages{ast: true, codegen: true}, ""},
		{[]string{"-d", ",ast,,"}, debugStages{ast: true}, ""},
		{[]string{"-d", ""}, debugStages{}, ""},
		{[]string{"--debug", "ast"}, debugStages{ast: true}, ""},
		{[]string{"--debug=codegen"}, debugStages{codegen: true}, ""},
		{[]string{"-dall"}, debugStages{ast: true, codegen: true}, ""},
		{[]string{"-d", "codegen-opt"}, debugStages{}, "-d codegen-opt is not supported: "},
		{[]string{"-d", "libbpf"}, debugStages{}, "-d libbpf is not supported: "},
		{[]string{"-d", "verifier"}, debugStages{}, "-d verifier is not supported: "},
		{[]string{"-d", "types"}, debugStages{}, "-d types is not supported: "},
		{[]string{"-d", "ast,types"}, debugStages{}, "-d types is not supported: "},
		{[]string{"-d", "dis"}, debugStages{}, "USAGE: invalid option for -d: dis"},
		{[]string{"-d", "parse"}, debugStages{}, "USAGE: invalid option for -d: parse"},
		{[]string{"-d", "AST"}, debugStages{}, "USAGE: invalid option for -d: AST"},
	}
	for _, tt := range tests {
		got, err := parseArgs(append(tt.args, "-e", "BEGIN {}"))
		switch {
		case tt.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("parseArgs(%q): error %v, want one starting %q", tt.args, err, tt.err)
			}
		case err != nil:
			t.Errorf("parseArgs(%q): %v", tt.args, err)
		case got.debug != tt.want:
			t.Errorf("parseArgs(%q): stages %+v, want %+v", tt.args, got.debug, tt.want)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-e"},
		{"-e", ""},
		{"-f", "xml", "-e", "x"},
		{"-p", "abc", "-e", "x"},
		{"-c", "", "-e", "x"},
		{"-c", " ", "-e", "x"},
		{"-c", "true", "-p", "1", "-e", "x"},
		{"-dd", "-e", "x"},
		{"-d", "everything", "-e", "x"},
		{"-d", "ast,bogus", "-e", "x"},
		{"-d", "types", "-e", "x"},
		{"-d", "dis", "-e", "x"},
		{"-d"},
		{"--bogus", "-e", "x"},
	} {
		if _, err := parseArgs(args); err == nil {
			t.Errorf("parseArgs(%q) succeeded, want an error", args)
		}
	}
}

// TestParsePid checks -p against bpftrace 0.17's messages.
func TestParsePid(t *testing.T) {
	tests := []struct {
		arg  string
		want int
		err  string
	}{
		{"1", 1, ""},
		{"4194304", 4194304, ""},
		{"abc", 0, "pid 'abc' is not a valid decimal number"},
		{"12x", 0, "pid '12x' is not a valid decimal number"},
		{"", 0, "pid '' is not a valid decimal number"},
		{"99999999999999999999", 0, "pid '99999999999999999999' outside of integer range"},
		{"0", 0, "pid '0' out of valid pid range [1,4194304]"},
		{"-5", 0, "pid '-5' out of valid pid range [1,4194304]"},
		{"4194305", 0, "pid '4194305' out of valid pid range [1,4194304]"},
		{"4294967297", 0, "pid '4294967297' out of valid pid range [1,4194304]"},
	}
	for _, tt := range tests {
		got, err := parsePid(tt.arg)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("parsePid(%q): error %v, want %q", tt.arg, err, tt.err)
			}
		case err != nil || got != tt.want:
			t.Errorf("parsePid(%q) = %d, %v; want %d", tt.arg, got, err, tt.want)
		}
	}
}

// TestRunUsageErrors checks what the command line prints for errors
// found before anything is compiled: bpftrace prints its usage after
// some and not after others.
func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args      []string
		want      string
		withUsage bool
	}{
		{[]string{"-c", "", "-e", "BEGIN {}"}, "ERROR: USAGE: -c needs a command to run, got an empty one\n", true},
		{[]string{"-p", "abc", "-e", "BEGIN {}"}, "ERROR: pid 'abc' is not a valid decimal number\n", false},
		{[]string{"-dd", "-e", "BEGIN {}"}, "ERROR: USAGE: invalid option for -d: d (bpftrace 0.17's -dd, its most verbose debug output, is gone: -d takes a stage, one of ast, codegen, all)\n", true},
		{[]string{"-d", "foo", "-e", "BEGIN {}"}, "ERROR: USAGE: invalid option for -d: foo (valid stages: ast, codegen, all)\n", true},
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		if code := run(tt.args, &stdout, &stderr); code != 1 {
			t.Errorf("run(%q) = %d, want 1", tt.args, code)
		}
		want := tt.want
		if tt.withUsage {
			want += "\n" + usage
		}
		if stderr.String() != want {
			t.Errorf("run(%q) printed:\n%s\nwant:\n%s", tt.args, stderr.String(), want)
		}
	}
}

func TestParseMixed(t *testing.T) {
	tests := []struct {
		args     []string
		operands []string
		format   string
		dump     bool
	}{
		{[]string{"42"}, []string{"42"}, "text", false},
		{[]string{"-f", "json", "42"}, []string{"42"}, "json", false},
		{[]string{"42", "-f", "json"}, []string{"42"}, "json", false},
		{[]string{"--dump", "a", "-f", "json", "b"}, []string{"a", "b"}, "json", true},
		{[]string{"a", "--", "-f"}, []string{"a", "-f"}, "text", false},
		{nil, nil, "text", false},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		format := fs.String("f", "text", "")
		dump := fs.Bool("dump", false, "")
		got, err := parseMixed(fs, tt.args)
		if err != nil || !reflect.DeepEqual(got, tt.operands) || *format != tt.format || *dump != tt.dump {
			t.Errorf("parseMixed(%q) = %q, %v, -f %s, --dump %v; want %q, -f %s, --dump %v",
				tt.args, got, err, *format, *dump, tt.operands, tt.format, tt.dump)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseMixed(fs, []string{"a", "-x"}); err == nil {
		t.Error("parseMixed accepted an unknown flag after an operand")
	}
}

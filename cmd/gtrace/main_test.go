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
		{[]string{"-lv", "t:syscalls:*"}, options{list: true, listVerbose: true, verbose: true, listPattern: "t:syscalls:*", format: "text"}},
		{[]string{"--list", "t:syscalls:*", "-v"}, options{list: true, listVerbose: true, verbose: true, listPattern: "t:syscalls:*", format: "text"}},
		{[]string{"-l", "-e", "i:s:1 {}", "--pid=7"}, options{list: true, program: "i:s:1 {}", pid: 7, format: "text"}},
		{[]string{"-l", "main_test.go"}, options{list: true, filename: "main_test.go", format: "text"}},
		{[]string{"-qk", "-p42", "-B", "line", "-e", "x"}, options{program: "x", quiet: true, warnings: true, pid: 42, buffering: "line", format: "text"}},
		{[]string{"-c", "-qk", "-e", "-lv"}, options{command: "-qk", program: "-lv", format: "text"}},
		{[]string{"--output", "out", "--cmd", "ls", "--quiet", "--verbose", "-e", "x"},
			options{program: "x", outFile: "out", command: "ls", quiet: true, verbose: true, format: "text"}},
		{[]string{"--include", "errno.h", "-I", "dir", "-Iother", "-e", "x"},
			options{program: "x", includes: []string{"errno.h"}, includeDirs: []string{"dir", "other"}, format: "text"}},
		{[]string{"--usdt-file-activation", "--no-feature", "kprobe_multi,uprobe_multi", "-b", "-e", "x"},
			options{program: "x", noFeature: map[string]bool{"kprobe_multi": true, "uprobe_multi": true}, format: "text"}},
		{[]string{"-l"}, options{list: true, format: "text"}},
		{[]string{"-f", "json", "-o", "out", "-q", "-v", "-e", "x"}, options{program: "x", format: "json", outFile: "out", quiet: true, verbose: true}},
		{[]string{"-c", "ls -l", "--dry-run", "--unsafe", "-d", "ast", "-e", "x"},
			options{program: "x", command: "ls -l", dryRun: true, unsafe: true, debug: debugStages{ast: true}, format: "text"}},
		{[]string{"-p", "42", "--dry-run", "-e", "x"}, options{program: "x", pid: 42, dryRun: true, format: "text"}},
		{[]string{"-e", "x", "--", "-1"}, options{program: "x", params: []string{"-1"}, format: "text"}},
		{[]string{"-f", "folded", "--flamegraph", "out.SVG", "--pprof", "out.pb.gz", "-e", "x"},
			options{program: "x", format: "folded", flameGraph: "out.SVG", pprofFile: "out.pb.gz"}},
		{[]string{"--flamegraph", "out.html", "-e", "x"}, options{program: "x", format: "text", flameGraph: "out.html"}},
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
		{"-kk", "-e", "x"},
		{"-k", "--no-warnings", "-e", "x"},
		{"--no-warnings", "-k", "-e", "x"},
		{"-B", "sometimes", "-e", "x"},
		{"--no-feature", "kprobe_multi,fast", "-e", "x"},
		{"--probe-filter", "[invalid", "-e", "x"},
		{"-l", "a", "b"},
		{"--flamegraph", "out.png", "-e", "x"},
		{"--flamegraph", "out", "-e", "x"},
		{"--pprof"},
	} {
		if _, err := parseArgs(args); err == nil {
			t.Errorf("parseArgs(%q) succeeded, want an error", args)
		}
	}
}

// TestParsePid checks -p against current bpftrace's messages.
func TestParsePid(t *testing.T) {
	tests := []struct {
		arg  string
		want int
		err  string
	}{
		{"1", 1, ""},
		{"4194304", 4194304, ""},
		{"1_000", 1000, ""},
		{"abc", 0, "Failed to parse pid: invalid integer: abc"},
		{"a1111", 0, "Failed to parse pid: invalid integer: a1111"},
		{"111a1", 0, "Failed to parse pid: invalid trailing bytes: 111a1"},
		{"", 0, "Failed to parse pid: invalid integer: "},
		{"99999999999999999999", 0, "Failed to parse pid: overflow error, maximum value is 18446744073709551615: 99999999999999999999"},
		{"0", 0, "Failed to attach to pid: pid 0 is not a process"},
		{"-5", 0, "Failed to parse pid: invalid integer: -5"},
		{"4194305", 0, "Pid out of range: 4194305"},
		{"5000000", 0, "Pid out of range: 5000000"},
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
		{[]string{"-p", "abc", "-e", "BEGIN {}"}, "ERROR: Failed to parse pid: invalid integer: abc\n", false},
		{[]string{"-f", "jsonx", "-e", "BEGIN {}"}, "ERROR: Invalid output format \"jsonx\"\nValid formats: 'text', 'json', 'folded'\n", false},
		{[]string{"--flamegraph", "fg.png", "-e", "BEGIN {}"}, "ERROR: --flamegraph fg.png: the file's name must end in .svg or .html, which picks what is written\n", false},
		{[]string{"-kk", "-e", "BEGIN {}"}, "ERROR: USAGE: -kk has been deprecated. Use a single -k for runtime warnings for errors in map lookups and probe reads.\n", false},
		{[]string{"-B", "x", "-e", "BEGIN {}"}, "ERROR: USAGE: -B must be either 'line', 'full', or 'none'.\n", false},
		{[]string{"--no-feature", "x", "-e", "BEGIN {}"}, "ERROR: USAGE: --no-feature can only have values 'kprobe_multi,kprobe_session,uprobe_multi'.\n", false},
		{[]string{"no_such_file.bt"}, "ERROR: failed to open file 'no_such_file.bt': No such file or directory\n", false},
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

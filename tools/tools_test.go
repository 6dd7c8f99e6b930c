package tools

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestAll checks every tool's first comment, and that each of its
// examples is a command line it accepts.
func TestAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no tools")
	}
	for _, tool := range all {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Summary == "" || tool.Description == "" {
				t.Errorf("summary %q, description %q: want both", tool.Summary, tool.Description)
			}
			for _, e := range tool.Examples {
				cmd, _, ok := strings.Cut(e, "#")
				if !ok {
					t.Errorf("example %q has no # comment", e)
				}
				f := strings.Fields(cmd)
				if len(f) == 0 || f[0] != tool.Name {
					t.Errorf("example %q does not run %s", e, tool.Name)
					continue
				}
				if _, err := tool.ParseArgs(f[1:]); err != nil {
					t.Errorf("example %q: %v", e, err)
				}
			}
		})
	}
}

// TestParseArgs maps command lines of biolatency onto its options.
func TestParseArgs(t *testing.T) {
	tool, err := Lookup("biolatency")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want Run
	}{
		{nil, Run{}},
		{[]string{"-D", "1", "5"}, Run{Named: []string{"disks", "interval=1", "count=5"}}},
		{[]string{"-mT", "2"}, Run{Named: []string{"milliseconds", "timestamp", "interval=2"}}},
		{[]string{"-d", "nvme0n1", "-Q"}, Run{Named: []string{"disk=nvme0n1", "queued"}}},
		{[]string{"-dnvme0n1"}, Run{Named: []string{"disk=nvme0n1"}}},
		{[]string{"-Qd", "vda"}, Run{Named: []string{"queued", "disk=vda"}}},
		{[]string{"--disk=vda", "--flags"}, Run{Named: []string{"disk=vda", "flags"}}},
		{[]string{"-j", "-c", "dd if=/dev/zero of=x", "-h"}, Run{JSON: true, Command: "dd if=/dev/zero of=x", Help: true}},
	}
	for _, tt := range tests {
		got, err := tool.ParseArgs(tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%q: got %+v, want %+v", tt.args, *got, tt.want)
		}
	}
}

// TestParseArgsBlockTools maps the flags of the other block I/O tools,
// BCC's, onto their options.
func TestParseArgsBlockTools(t *testing.T) {
	tests := []struct {
		tool string
		args []string
		want Run
	}{
		{"biosnoop", []string{"-QP", "-d", "vda"}, Run{Named: []string{"queued", "pattern", "disk=vda"}}},
		{"bitesize", []string{"-T", "--comm=fio", "1", "5"}, Run{Named: []string{"timestamp", "comm=fio", "interval=1", "count=5"}}},
		{"biotop", []string{"-C", "-r", "5", "-p181", "2"}, Run{Named: []string{"noclear", "maxrows=5", "pid=181", "interval=2"}}},
	}
	for _, tt := range tests {
		tool, err := Lookup(tt.tool)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tool.ParseArgs(tt.args)
		if err != nil {
			t.Errorf("%s %q: %v", tt.tool, tt.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%s %q: got %+v, want %+v", tt.tool, tt.args, *got, tt.want)
		}
	}
	// biosnoop traces no interval, as BCC's: a positional is an error.
	tool, err := Lookup("biosnoop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tool.ParseArgs([]string{"10"}); err == nil || !strings.HasPrefix(err.Error(), "biosnoop: unexpected argument 10") {
		t.Errorf("biosnoop 10: %v, want unexpected argument", err)
	}
}

// TestParseArgsErrors checks that a bad command line says what is wrong
// and shows the usage.
func TestParseArgsErrors(t *testing.T) {
	tool, err := Lookup("biolatency")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-x"}, "biolatency: unknown flag -x"},
		{[]string{"-p", "1"}, "biolatency: unknown flag -p"}, // biolatency reads no pid
		{[]string{"--nope"}, "biolatency: unknown option --nope"},
		{[]string{"-d"}, "biolatency: -d needs a DISK"},
		{[]string{"-c"}, "biolatency: -c needs a command"},
		{[]string{"0"}, `biolatency: INTERVAL must be a positive number, got "0"`},
		{[]string{"1", "x"}, `biolatency: COUNT must be a positive number, got "x"`},
		{[]string{"1", "2", "3"}, "biolatency: unexpected argument 3"},
	}
	for _, tt := range tests {
		_, err := tool.ParseArgs(tt.args)
		if err == nil {
			t.Errorf("%q: no error, want %q", tt.args, tt.want)
			continue
		}
		first, usage, _ := strings.Cut(err.Error(), "\n")
		if first != tt.want || usage != tool.UsageLine() {
			t.Errorf("%q: got %q, want %q and the usage line", tt.args, err, tt.want)
		}
	}
}

// TestHelp checks that -h shows every option with its flag and
// description, and the examples.
func TestHelp(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range all {
		var b bytes.Buffer
		if err := tool.WriteHelp(&b); err != nil {
			t.Fatal(err)
		}
		help := b.String()
		if !strings.HasPrefix(help, tool.UsageLine()+"\n\n"+tool.Summary+".\n") {
			t.Errorf("%s: help does not start with the usage and summary:\n%s", tool.Name, help)
		}
		for _, o := range tool.Options {
			if !strings.Contains(help, o.Description) {
				t.Errorf("%s: help lacks option %s's description %q", tool.Name, o.Name, o.Description)
			}
		}
		for _, e := range tool.Examples {
			if !strings.Contains(help, "    "+e+"\n") {
				t.Errorf("%s: help lacks example %q", tool.Name, e)
			}
		}
	}
}

// TestREADME checks that the README lists the tools as `gtrace tools
// --markdown` does.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- tools: gtrace tools --markdown -->\n", "<!-- end of tools -->"
	_, after, ok := strings.Cut(string(readme), begin)
	listed, _, ok2 := strings.Cut(after, end)
	if !ok || !ok2 {
		t.Fatalf("README.md has no %q ... %q section", begin, end)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, all); err != nil {
		t.Fatal(err)
	}
	if listed != b.String() {
		t.Errorf("README.md's list of tools is not gtrace tools --markdown's; want:\n%s", b.String())
	}
}

package tools

import (
	"bytes"
	"fmt"
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
		{[]string{"-j", "-c", "dd if=/dev/zero of=x", "-h"}, Run{Format: "json", Command: "dd if=/dev/zero of=x", Help: true}},
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

// TestLookup finds a tool by name, and no tool for a pattern or a path.
func TestLookup(t *testing.T) {
	if tool, err := Lookup("biolatency"); err != nil || tool.Name != "biolatency" || tool.Group != "storage" {
		t.Errorf("Lookup(biolatency) = %+v, %v", tool, err)
	}
	for _, name := range []string{"nope", "bio*", "storage/biolatency", ""} {
		if _, err := Lookup(name); err == nil || err.Error() != fmt.Sprintf("no tool is called %q: `gtrace tools` lists them", name) {
			t.Errorf("Lookup(%q) error %v, want none found", name, err)
		}
	}
}

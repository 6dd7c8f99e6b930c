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
				f, comment, err := SplitExample(e)
				if err != nil || comment == "" {
					t.Errorf("example %q has no # comment (%v)", e, err)
				}
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

// TestParseArgs maps tools' command lines onto what they run: BCC's
// flags, a letter's meaning in the tools that give it another (one
// table), long options, INTERVAL and COUNT, and declared arguments (a
// pattern to its attach point, a function to its entry and return, an
// option's argument to the option, a left-out one to its default).
func TestParseArgs(t *testing.T) {
	tests := []struct {
		tool string
		args []string
		want Run
	}{
		{"biolatency", nil, Run{}},
		{"biolatency", []string{"-D", "1", "5"}, Run{Named: []string{"disks", "interval=1", "count=5"}}},
		{"biolatency", []string{"-mT", "2"}, Run{Named: []string{"milliseconds", "timestamp", "interval=2"}}},
		{"biolatency", []string{"-d", "nvme0n1", "-Q"}, Run{Named: []string{"disk=nvme0n1", "queued"}}},
		{"biolatency", []string{"-dnvme0n1"}, Run{Named: []string{"disk=nvme0n1"}}},
		{"biolatency", []string{"-Qd", "vda"}, Run{Named: []string{"queued", "disk=vda"}}},
		{"biolatency", []string{"--disk=vda", "--flags"}, Run{Named: []string{"disk=vda", "flags"}}},
		{"biolatency", []string{"-j", "-c", "dd if=/dev/zero of=x", "-h"}, Run{Format: "json", Command: "dd if=/dev/zero of=x", Help: true}},
		{"syscount", []string{"-PLxm", "-e", "2", "-i", "5"}, Run{Named: []string{"pids", "latency", "failed", "milliseconds", "errno=2", "interval=5"}}},
		{"syscount", []string{"--top=20", "-p181"}, Run{Named: []string{"top=20", "pid=181"}}},
		{"execsnoop", []string{"-xTt", "-n", "main", "-l", "tpkg"}, Run{Named: []string{"failed", "timestamp", "elapsed", "name=main", "line=tpkg"}}},
		{"runqlat", []string{"-mT", "--tids", "1", "10"}, Run{Named: []string{"milliseconds", "timestamp", "tids", "interval=1", "count=10"}}},
		{"hardirqs", []string{"-CN", "--dist"}, Run{Named: []string{"counts", "nanoseconds", "dist"}}},
		{"tcpconnect", []string{"-t", "--port=80"}, Run{Named: []string{"elapsed", "port=80"}}},
		{"biosnoop", []string{"-QP", "-d", "vda"}, Run{Named: []string{"queued", "pattern", "disk=vda"}}},
		{"bitesize", []string{"-T", "--comm=fio", "1", "5"}, Run{Named: []string{"timestamp", "comm=fio", "interval=1", "count=5"}}},
		{"biotop", []string{"-C", "-r", "5", "-p181", "2"}, Run{Named: []string{"noclear", "maxrows=5", "pid=181", "interval=2"}}},
		{"biolatency", []string{"-d", "vda", "-D", "-F"}, Run{Named: []string{"disk=vda", "disks", "flags"}}},
		{"funccount", []string{"-d", "10", "-Ti", "5", "-p", "7", "c:malloc"},
			Run{Named: []string{"duration=10", "timestamp", "interval=5", "pid=7"}, Params: []string{"uprobe:libc:malloc"}}},
		{"stackcount", []string{"-D", "3", "-U", "-f", "c:malloc"},
			Run{Named: []string{"duration=3", "user"}, Params: []string{"uprobe:libc:malloc"}, Format: "folded"}},
		{"funclatency", []string{"-Fm", "./p:f*"},
			Run{Named: []string{"per_function", "milliseconds"}, Params: []string{"uprobe:./p:f*", "uretprobe:./p:f*"}}},
		{"profile", []string{"-F", "99", "-K"}, Run{Named: []string{"kernel"}, Params: []string{"99"}}},
		{"offcputime", []string{"-m", "1000", "-M", "2000"}, Run{Named: []string{"min_block=1000", "max_block=2000"}}},
		{"syscount", []string{"-T", "5", "-L", "-P"}, Run{Named: []string{"top=5", "latency", "pids"}}},
		{"runqlat", []string{"-L", "-m"}, Run{Named: []string{"tids", "milliseconds"}}},
		{"tcpconnect", []string{"-P", "80"}, Run{Named: []string{"port=80"}}},
		{"hardirqs", []string{"-d", "-N"}, Run{Named: []string{"dist", "nanoseconds"}}},
		{"funccount", []string{"t:syscalls:sys_enter_getppid"}, Run{Params: []string{"tracepoint:syscalls:sys_enter_getppid"}}},
		{"funccount", []string{"-r", "^vfs_.*"}, Run{Params: []string{"kprobe:vfs_*"}}},
		{"funccount", []string{"vfs_r$", "-r"}, Run{Params: []string{"kprobe:vfs_r"}}},
		{"funclatency", []string{"vfs_read"}, Run{Params: []string{"kprobe:vfs_read", "kretprobe:vfs_read"}}},
		{"funclatency", []string{"-r", "c:^read$"}, Run{Params: []string{"uprobe:libc:read", "uretprobe:libc:read"}}},
		{"profile", nil, Run{Params: []string{"49"}}},
		{"profile", []string{"10"}, Run{Named: []string{"duration=10"}, Params: []string{"49"}}},
		{"profile", []string{"-f", "--flamegraph", "x.svg", "--pprof", "x.pb.gz", "5", "-F99"},
			Run{Named: []string{"duration=5"}, Params: []string{"99"}, Format: "folded", FlameGraph: "x.svg", Pprof: "x.pb.gz"}},
		{"offcputime", []string{"5", "-j"}, Run{Named: []string{"duration=5"}, Format: "json"}},
		{"funccount", []string{"-h"}, Run{Help: true}},
		{"opensnoop", []string{"--pod", "7d3c9a1e", "--container", "aaaa", "-x"},
			Run{Named: []string{"failed"}, Container: []string{"--pod", "7d3c9a1e", "--container", "aaaa"}}},
		{"syscount", []string{"--cgroup", "/kubepods.slice", "--pidns", "4026532177"},
			Run{Container: []string{"--cgroup", "/kubepods.slice", "--pidns", "4026532177"}}},
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
		{[]string{"--pod"}, "biolatency: --pod needs a value"},
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
// description, every argument, and the examples.
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
		for _, a := range tool.Arguments {
			if !strings.Contains(help, a.Description) {
				t.Errorf("%s: help lacks argument %s's description %q", tool.Name, a.Name, a.Description)
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

// TestArgumentErrors checks the errors of arguments and of flags that
// are another tool's.
func TestArgumentErrors(t *testing.T) {
	tests := []struct {
		tool string
		args []string
		want string
	}{
		{"funccount", nil, "funccount: needs a PATTERN"},
		{"funccount", []string{"a", "b"}, "funccount: unexpected argument b"},
		{"biosnoop", []string{"10"}, "biosnoop: unexpected argument 10"}, // no INTERVAL, as BCC's
		{"funccount", []string{"-r", "vfs_(read|write)"}, `funccount: pattern "vfs_(read|write)": regular expression "vfs_(read|write)": bpftrace attach points take only * wildcards, so only ^, $ and .* translate, not '('`},
		{"funclatency", []string{"t:sched:sched_switch"}, "funclatency: t:sched:sched_switch has no return to time: give a function"},
		{"profile", []string{"-r"}, "profile: unknown flag -r"},
		{"stackcount", []string{"-d", "x"}, "stackcount: unknown flag -d"},
		{"profile", []string{"5", "6"}, "profile: unexpected argument 6"},
		{"profile", []string{"x"}, `profile: DURATION must be a positive number, got "x"`},
		{"profile", []string{"--flamegraph"}, "profile: --flamegraph needs a FILE"},
		{"funccount", []string{"--flamegraph", "x.svg", "c:f"}, "funccount: unknown option --flamegraph"},
		{"biolatency", []string{"-f"}, "biolatency: unknown flag -f"},
	}
	for _, tt := range tests {
		tool, err := Lookup(tt.tool)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tool.ParseArgs(tt.args)
		if err == nil {
			t.Errorf("%s %q: no error, want %q", tt.tool, tt.args, tt.want)
			continue
		}
		first, usage, _ := strings.Cut(err.Error(), "\n")
		if first != tt.want || usage != tool.UsageLine() {
			t.Errorf("%s %q: got %q, want %q and the usage line", tt.tool, tt.args, err, tt.want)
		}
	}
}

// TestAttachPoint translates BCC's probe patterns into attach points.
func TestAttachPoint(t *testing.T) {
	tests := []struct {
		pattern     string
		regexp      bool
		entry, ret  string
		wantErrPart string
	}{
		{"vfs_*", false, "kprobe:vfs_*", "kretprobe:vfs_*", ""},
		{"p:vfs_read", false, "kprobe:vfs_read", "kretprobe:vfs_read", ""},
		{"p::vfs_read", false, "kprobe:vfs_read", "kretprobe:vfs_read", ""},
		{"r:vfs_read", false, "kretprobe:vfs_read", "", ""},
		{"r::vfs_read", false, "kretprobe:vfs_read", "", ""},
		{"t:sched:sched_switch", false, "tracepoint:sched:sched_switch", "", ""},
		{"t:sched:sched_*", false, "tracepoint:sched:sched_*", "", ""},
		{"c:malloc", false, "uprobe:libc:malloc", "uretprobe:libc:malloc", ""},
		{"p:c:malloc", false, "uprobe:libc:malloc", "uretprobe:libc:malloc", ""},
		{"r:c:malloc", false, "uretprobe:libc:malloc", "", ""},
		{"pthread:pthread_create", false, "uprobe:libpthread:pthread_create", "uretprobe:libpthread:pthread_create", ""},
		{"libssl:SSL_read", false, "uprobe:libssl:SSL_read", "uretprobe:libssl:SSL_read", ""},
		{"/usr/lib/x/lib.so:f*", false, "uprobe:/usr/lib/x/lib.so:f*", "uretprobe:/usr/lib/x/lib.so:f*", ""},
		{"./test:read*", false, "uprobe:./test:read*", "uretprobe:./test:read*", ""},
		{"u:pthread:pthread_start", false, "usdt:libpthread:pthread_start", "", ""},
		{"^vfs_.*", true, "kprobe:vfs_*", "kretprobe:vfs_*", ""},
		{"vfs_read$", true, "kprobe:vfs_read", "kretprobe:vfs_read", ""},
		{"tcp", true, "kprobe:tcp*", "kretprobe:tcp*", ""},
		{"c:^mal.*oc$", true, "uprobe:libc:mal*oc", "uretprobe:libc:mal*oc", ""},
		{"t:sched:^sched_s", true, "tracepoint:sched:sched_s*", "", ""},
		{"", false, "", "", `pattern "" names no function`},
		{"t:sched_switch", false, "", "", `pattern "t:sched_switch": t: takes two names, t:CATEGORY:EVENT or u:LIB:PROBE`},
		{"u::probe", false, "", "", `pattern "u::probe": u: takes two names`},
		{"a:b:c:d", false, "", "", `pattern "a:b:c:d" is none of [p:|r:][LIB:]FUNC, t:CATEGORY:EVENT or u:LIB:PROBE`},
		{"c:", false, "", "", `pattern "c:" names no function`},
		{"vfs_re.d", true, "", "", `not '.'`},
		{"vfs_(read|write)", true, "", "", `not '('`},
		{"$", true, "", "", `pattern "$" names no function`},
	}
	for _, tt := range tests {
		entry, ret, err := AttachPoint(tt.pattern, tt.regexp)
		switch {
		case tt.wantErrPart != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErrPart) {
				t.Errorf("AttachPoint(%q, %v) error %v, want one with %q", tt.pattern, tt.regexp, err, tt.wantErrPart)
			}
		case err != nil || entry != tt.entry || ret != tt.ret:
			t.Errorf("AttachPoint(%q, %v) = %q, %q, %v; want %q, %q", tt.pattern, tt.regexp, entry, ret, err, tt.entry, tt.ret)
		}
	}
}

// TestArgumentsSection reads a first comment's ARGUMENTS: and refuses
// lines that declare no argument, and an argument left out with nothing
// to bind.
func TestArgumentsSection(t *testing.T) {
	const head = "/*\n * x - y.\n *\n * z\n *\n * ARGUMENTS:\n"
	const tail = " *\n * EXAMPLES:\n *     x   # x\n */\nbegin { printf(\"%d\\n\", getopt(\"n\", 0, \"n\")); }\n"
	tool, err := parse("x", "cpu", []byte(head+" *     pattern   what to trace\n *     [n]   a count\n *     [hz=49]   a frequency\n"+tail))
	if err != nil {
		t.Fatal(err)
	}
	want := []Argument{{Name: "pattern", Description: "what to trace"}, {Name: "n", Description: "a count", Optional: true},
		{Name: "hz", Description: "a frequency", Optional: true, Default: "49"}}
	if !reflect.DeepEqual(tool.Arguments, want) || tool.Description != "z" {
		t.Errorf("arguments %+v, description %q; want %+v and z", tool.Arguments, tool.Description, want)
	}
	if u := tool.UsageLine(); u != "usage: x [-h] [-j] [-c CMD] [--cgroup PATH | --pod UID [--container ID] | --pidns INODE] pattern [n] [hz]" {
		t.Errorf("usage %q", u)
	}
	for line, want := range map[string]string{
		" *     pattern\n":       "argument line \"pattern\" is not `name  description`",
		" *     [a]b  what\n":    "argument line \"[a]b  what\" is not",
		" *     [m]   a count\n": "argument m may be left out, but is no option: give it a default, [m=DEFAULT]",
	} {
		if _, err := parse("x", "cpu", []byte(head+line+tail)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", line, err, want)
		}
	}
}

package tools

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestParseSpecifier(t *testing.T) {
	tests := []struct {
		spec      string
		histogram bool
		attach    string
		// want are the macros' bodies that differ from those of a
		// count of calls by probe.
		want map[string]string
	}{
		{"p:c:write(int fd, const void *buf, size_t count):size_t:count", true, "uprobe:libc:write",
			map[string]string{"spec_histogram": "true", "spec_key": "(uint64)(arg2)", "spec_value": "(uint64)(arg2)"}},
		{"p:c:malloc(size_t size):size_t:size", false, "uprobe:libc:malloc",
			map[string]string{"spec_key": "(uint64)(arg0)", "spec_value": "(uint64)(arg0)"}},
		{"r:c:open():int:$retval", false, "uretprobe:libc:open",
			map[string]string{"spec_key": "(int32)(retval)", "spec_value": "(int32)(retval)"}},
		{"t:syscalls:sys_enter_write():size_t:args->count:args->fd==1", true, "tracepoint:syscalls:sys_enter_write",
			map[string]string{"spec_histogram": "true", "spec_key": "(uint64)(args->count)", "spec_value": "(uint64)(args->count)", "spec_filter": "(args->fd==1)"}},
		// A field's name is no parameter's; a string is left as it is.
		{`p:./prog:f(struct s *s, int count):int,char*:s->count,comm:comm == "count"#f's`, false, "uprobe:./prog:f",
			map[string]string{"spec_label": `"f's"`, "spec_key": "((int32)(arg0->count), str(comm))", "spec_value": "(int32)(arg0->count)", "spec_filter": `(comm == "count")`}},
		{"p::vfs_read(void *f, char *buf, size_t n):size_t:n:n>4096", false, "kprobe:vfs_read",
			map[string]string{"spec_key": "(uint64)(arg2)", "spec_value": "(uint64)(arg2)", "spec_filter": "(arg2>4096)"}},
		// A filter may hold colons.
		{"p::f(int a):unsigned int:a:a ? 1 : 0", false, "kprobe:f",
			map[string]string{"spec_key": "(uint32)(arg0)", "spec_value": "(uint32)(arg0)", "spec_filter": "(arg0 ? 1 : 0)"}},
		{"u:pthread:mutex_lock()", false, "usdt:libpthread:mutex_lock", nil},
		{"p:c:puts(const char *s):const char *, struct x *:s,s", false, "uprobe:libc:puts",
			map[string]string{"spec_key": "(str(arg0), (uint64)(arg0))", "spec_value": "str(arg0)"}},
	}
	for _, tt := range tests {
		got, err := ParseSpecifier(tt.spec, tt.histogram)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		want := map[string]string{"spec_label": `"` + strings.ReplaceAll(tt.spec, `"`, `\"`) + `"`, "spec_histogram": "false",
			"spec_filter": "true", "spec_key": "probe", "spec_value": "1"}
		maps.Copy(want, tt.want)
		if got.Attach != tt.attach || !maps.Equal(got.Macros, want) {
			t.Errorf("%q: got %s %v, want %s %v", tt.spec, got.Attach, got.Macros, tt.attach, want)
		}
	}
}

func TestParseSpecifierErrors(t *testing.T) {
	tests := []struct {
		spec      string
		histogram bool
		want      string
	}{
		{"p:c:write", false, `"write" is not function(signature)`},
		{"p:c", false, "is not {p,r,t,u}"},
		{"p:c:f():int", false, "is not {p,r,t,u}"},
		{"x:c:f()", false, `probe type "x" is none of p, r, t and u`},
		{"p:c:f(int a:int:a", false, "a ( is not closed"},
		{"p:c:f(int a)):int:a", false, "closes nothing"},
		{"p:c:f(int):int:a", false, `parameter "int" of f has no name`},
		{"p:c:f*():int:a", false, "without wildcards"},
		{"p:c:f(int a):int,int:a", false, "2 types for 1 expressions"},
		{"p:c:f(int a):float:a", false, `type "float" is none of`},
		{"p:c:f(char *s):char*:s", true, "a histogram is of numbers"},
		{"p:c:f(int a, int b):int,int:a,b", true, "a histogram is of one expression, not 2"},
		{"p:c:f()", true, "a histogram needs a type and an expression"},
		{"p:c:f(int a):int:$retval", false, "$retval is a return's (r:), not a p: probe's"},
		{"r:c:f(int a):int:a", false, "a is an argument, which a return (r:) does not see"},
		{"r:c:f():int:$latency", false, "$latency is none of gtrace's argdist's"},
		{"p:c:f(int a):int:", false, "an expression is empty"},
		{"t:sched:switch():int:args->prev_pid:", false, "an expression is empty"},
	}
	for _, tt := range tests {
		_, err := ParseSpecifier(tt.spec, tt.histogram)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), `specifier "`) {
			t.Errorf("%q: error %v, want one containing %q", tt.spec, err, tt.want)
		}
	}
}

// TestArgdistArgs reads argdist's command lines: a specifier of -C or
// -H becomes the attach point $1 and the macros Script writes into the
// source; none, two or a wrong one is a located usage error.
func TestArgdistArgs(t *testing.T) {
	tool, err := Lookup("argdist")
	if err != nil {
		t.Fatal(err)
	}
	r, err := tool.ParseArgs([]string{"-p", "181", "-i", "5", "-n", "2", "-T", "3", "-H", "t:syscalls:sys_enter_write():size_t:args->count"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pid=181", "interval=5", "count=2", "top=3"}; !slices.Equal(r.Named, want) || !slices.Equal(r.Params, []string{"tracepoint:syscalls:sys_enter_write"}) {
		t.Errorf("got options %q and parameters %q, want %q and the tracepoint", r.Named, r.Params, want)
	}
	src, err := tool.Script(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"macro spec_histogram() { true }\n", "macro spec_value() { (uint64)(args->count) }\n", "macro spec_filter() { true }\n"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the script has no line %q", want)
		}
	}
	errors := []struct {
		args []string
		want string
	}{
		{nil, "argdist: needs a specifier, to -C or -H"},
		{[]string{"-C", "p:c:f()", "-C", "p:c:g()"}, "argdist: -C SPECIFIER is given twice"},
		{[]string{"-C", "p:c:f()", "-H", "p:c:g(int a):int:a"}, "argdist: takes one specifier, to -C or -H"},
		{[]string{"-H", "p:c:g(int a):int"}, `argdist: specifier "p:c:g(int a):int": is not`},
	}
	for _, tt := range errors {
		if _, err := tool.ParseArgs(tt.args); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
		}
	}
}

package sema

import (
	"slices"
	"strings"
	"testing"

	"gtrace/lang/token"
)

func TestNetCallErrors(t *testing.T) {
	tests := []struct {
		src    string
		unsafe bool
		want   string
	}{
		{`BEGIN { $a = pton("1.2.3"); }`, false, `pton(): "1.2.3" is not an IPv4 or IPv6 address`},
		{`BEGIN { $a = pton("::ffff:1.2.3.4x"); }`, false, `pton(): "::ffff:1.2.3.4x" is not an IPv4 or IPv6 address`},
		{`BEGIN { $s = "1.2.3.4"; $a = pton($s); }`, false, "pton() expects a string literal"},
		{`BEGIN { $m = macaddr("abcdef"); }`, false, "macaddr() does not support literal string arguments"},
		{`BEGIN { $m = macaddr(pton("1.2.3.4")); }`, false, "macaddr() argument must be at least 6 bytes in size"},
		{`BEGIN { $m = macaddr((1, 2)); }`, false, "macaddr() only supports array or pointer arguments ((int8,int8) provided)"},
		{`BEGIN { $c = cgroup_path("x"); }`, false, "Expected an integer, got 'string[2]'"},
		{`BEGIN { $s = "u"; $c = cgroup_path(1, $s); }`, false, "cgroup_path() expects a string literal as its filter"},
		{`BEGIN { $p = percpu_kaddr("nope"); }`, false, `Could not resolve variable "nope" from BTF`},
		{`BEGIN { $c = socket_cookie((struct pair *)0); }`, false, "socket_cookie() only supports 'struct sock *' as the argument ('struct pair *' provided)"},
		{`BEGIN { $c = socket_cookie(1); }`, false, "socket_cookie() only supports 'struct sock *' as the argument ('int8' provided)"},
		{`BEGIN { $r = skboutput("x.pcap", (struct sk_buff *)0, 10, pid); }`, false, "skboutput(): the offset must be a non-negative integer literal"},
		{`BEGIN { $r = skboutput("x.pcap", "s", 10, 0); }`, false, "skboutput() expects a pointer to a struct sk_buff, got 'string[2]'"},
		{`BEGIN { $ok = write_user(0, "x", 1); }`, false, "write_user() is unsafe. To use you need the --unsafe flag"},
		{`BEGIN { $ok = write_user(0, 5, 1); }`, true, "write_user() copies a value of the program, such as a string or an array, not 'int8'"},
		{`BEGIN { $r = reg("ip"); }`, false, "reg() can not be used with 'begin' probes"},
		{`kprobe:vfs_read { $r = reg("nope"); }`, false, "'nope' is not a valid register on this architecture (x86_64)"},
		{`BEGIN { errorf("%d"); }`, false, "errorf: Not enough arguments for format string (0 supplied, 1 expected)"},
		{`BEGIN { $f = "x"; warnf($f); }`, false, "warnf() expects a string literal as its first argument"},
		{`BEGIN { debugf("%d %d %d %d", 1, 2, 3, 4); }`, false, "The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).\ncannot use more than 3 conversion specifiers"},
		{`BEGIN { debugf("%c", 65); }`, false, "The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).\nInvalid format specifier for `debugf`: c"},
		{`BEGIN { debugf("%s", 1); }`, false, "The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).\nType does not match format specifier: s"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if _, got := check(t, tt.src, tt.unsafe); got != tt.want {
				t.Errorf("got errors:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestNetCallTypes(t *testing.T) {
	tests := []struct {
		src, value string
	}{
		{`BEGIN { @x = pton("127.0.0.1"); }`, "int8[4]"},
		{`BEGIN { @x = pton("::1"); }`, "int8[16]"},
		{`BEGIN { @x = (uint32)pton("127.0.0.1"); }`, "uint32"},
		{`BEGIN { @x = macaddr(pton("::1")); }`, "macaddr_t"},
		{`BEGIN { @x = macaddr(0); }`, "macaddr_t"},
		{`BEGIN { @x = cgroup_path(cgroup, "unified"); }`, "cgroup_path_t"},
		{`BEGIN { @x = percpu_kaddr("process_counts"); }`, "unsigned long *"},
		{`BEGIN { @x = *percpu_kaddr("process_counts", 1); }`, "uint64"},
		{`BEGIN { $p = (struct pair *)percpu_kaddr("process_counts", 0); if ($p != 0) { @x = $p.in; } }`, "struct inner"},
		{`BEGIN { @x = socket_cookie((struct sock *)0); }`, "uint64"},
		{`BEGIN { @x = skboutput("x.pcap", (struct sk_buff *)0, 10, 14); }`, "uint32"},
		{`BEGIN { @x = write_user(0, "abc", 3); }`, "bool"},
		{`uprobe:libc:malloc { @x = reg("ip"); }`, "uint64"},
		{`uprobe:libc:malloc { @x = reg("pc"); }`, "uint64"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, true)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			if got := info.Maps["@x"].Value.String(); got != tt.value {
				t.Errorf("value type %s, want %s", got, tt.value)
			}
		})
	}
}

func TestPton(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		ok   bool
	}{
		{"127.0.0.1", []byte{127, 0, 0, 1}, true},
		{"::1", append(make([]byte, 15), 1), true},
		{"::ffff:1.2.3.4", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}, true},
		{"1.2.3", nil, false},
		{"fe80::1%eth0", nil, false},
		{"", nil, false},
	}
	for _, tt := range tests {
		got, ok := Pton(tt.in)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("Pton(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestMessageExpansions checks that errorf() keeps the macro calls it
// was expanded from, for the runtime to print.
func TestMessageExpansions(t *testing.T) {
	src := `macro inner() { errorf("x"); } macro outer() { inner(); } BEGIN { outer(); }`
	info, errs := checkMacros(t, src)
	if errs != "" {
		t.Fatalf("unexpected errors: %s", errs)
	}
	f := token.NewFile("stdin", []byte(src))
	// The calls, outermost first: outer() in BEGIN, inner() in outer.
	want := []int{strings.LastIndex(src, "outer();") + 1, strings.Index(src, "inner();") + 1}
	for call, spans := range info.Progs[0].Expanded {
		if call.Name != "errorf" {
			t.Errorf("Expanded holds %s()", call.Name)
		}
		var got []int
		for _, sp := range spans {
			got = append(got, f.Position(sp.Start).Column)
		}
		if !slices.Equal(got, want) {
			t.Errorf("expanded from the calls at columns %v, want %v", got, want)
		}
		return
	}
	t.Error("no errorf() in Expanded")
}

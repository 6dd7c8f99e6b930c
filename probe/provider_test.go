package probe

import (
	"slices"
	"strings"
	"testing"

	"gtrace/lang/builtin"
)

// TestProviders checks what every provider must declare.
func TestProviders(t *testing.T) {
	seen := map[string]Kind{}
	for _, k := range Kinds() {
		p := providers[k]
		if len(p.names) == 0 || p.parse == nil {
			t.Errorf("%v: no names or no parser", k)
		}
		for _, n := range p.names {
			if other, dup := seen[n]; dup {
				t.Errorf("%s names both %v and %v", n, other, k)
			}
			seen[n] = k
		}
		if (p.attach == nil) != (p.context == NoContext) {
			t.Errorf("%v: run by gtrace %v, but context %d", k, p.attach == nil, p.context)
		}
		for _, b := range p.builtins {
			if !slices.Contains([]builtin.Var{builtin.Args, builtin.ArgN, builtin.Func, builtin.Retval}, b) {
				t.Errorf("%v offers %v, which is not read from the context", k, b)
			}
		}
	}
}

// TestListedNames checks that a listing pattern finds each provider by
// every one of its names, ur as well as uretprobe.
func TestListedNames(t *testing.T) {
	for _, k := range Kinds() {
		p := providers[k]
		if p.list == nil {
			continue
		}
		for _, n := range p.names {
			got := listedProviders(n)
			if len(got) != 1 || got[0] != p {
				t.Errorf("listedProviders(%q) = %d providers, want %v", n, len(got), k)
			}
		}
	}
	// A wildcard lists the providers that are not explicit, by name, and
	// iterators, which gtrace lists but does not attach.
	var names []string
	for _, p := range listedProviders("*") {
		names = append(names, p.names[0])
	}
	want := []string{"fentry", "hardware", "iter", "kprobe", "rawtracepoint", "software", "tracepoint", "uprobe", "usdt"}
	if !slices.Equal(names, want) {
		t.Errorf("listedProviders(*) = %q, want %q", names, want)
	}
}

// TestListBinaryNames lists a binary's functions through each name of
// the uprobe providers.
func TestListBinaryNames(t *testing.T) {
	for _, tt := range []struct{ pattern, prefix string }{
		{"uprobe:libc:getaddrinfo", "uprobe:/"},
		{"u:libc:getaddrinfo", "uprobe:/"},
		{"uretprobe:libc:getaddrinfo", "uretprobe:/"},
		{"ur:libc:getaddrinfo", "uretprobe:/"},
	} {
		got, err := List(tt.pattern, ListOptions{})
		if err != nil {
			t.Fatalf("List(%q): %v", tt.pattern, err)
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], tt.prefix) || !strings.HasSuffix(got[0], ":getaddrinfo") {
			t.Errorf("List(%q) = %q, want one %s...:getaddrinfo", tt.pattern, got, tt.prefix)
		}
	}
}

package probe

import (
	"os"
	"slices"
	"testing"

	"gtrace/internal/testutils"
)

// TestSplitParts checks the splitting of attach points on ':' outside
// quotes, and escapes in quotes.
func TestSplitParts(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"uprobe:/bin/sh:main", []string{"uprobe", "/bin/sh", "main"}},
		{`usdt:bin:p:"a:b"`, []string{"usdt", "bin", "p", "a:b"}},
		{`usdt:bin:test:"\"probe1\""`, []string{"usdt", "bin", "test", `"probe1"`}},
		{`usdt:bin:p:"a\\b"`, []string{"usdt", "bin", "p", `a\b`}},
		{`usdt:::x`, []string{"usdt", "", "", "x"}},
	}
	for _, tt := range tests {
		if got := splitParts(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("splitParts(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestBinariesOfPid checks that with -p, no binary or "*" stands for
// the files the process maps, the test binary among them.
func TestBinariesOfPid(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Pid: os.Getpid()}
	for _, target := range []string{"", "*"} {
		paths, err := env.binaries(target)
		if err != nil || !slices.Contains(paths, self) {
			t.Errorf("binaries(%q) with -p = %q, %v; want %s among them", target, paths, err, self)
		}
	}
	if _, err := (&Env{}).binaries("/etc/passwd"); err == nil {
		t.Errorf("binaries(/etc/passwd) is not refused: not ELF")
	}
	if paths, err := (&Env{Unsafe: true}).binaries("/etc/passwd"); err != nil || !slices.Equal(paths, []string{"/etc/passwd"}) {
		t.Errorf("binaries(/etc/passwd) with --unsafe = %q, %v", paths, err)
	}
}

// TestParseRawTracepointWildcard expands a raw tracepoint wildcard over
// the kernel's BTF, and names a missing one as bpftrace does.
func TestParseRawTracepointWildcard(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		testutils.Skip(t, "no kernel BTF")
	}
	probes, err := Parse("rawtracepoint:sys_e*")
	var names []string
	for _, p := range probes {
		names = append(names, p.Name)
	}
	if want := []string{"rawtracepoint:sys_enter", "rawtracepoint:sys_exit"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("Parse(rawtracepoint:sys_e*) = %q, %v; want %q", names, err, want)
	}
	if probes, err := Parse("rawtracepoint:nonsense"); err != nil || len(probes) != 0 {
		t.Errorf("Parse(rawtracepoint:nonsense) = %v, %v; want no probes", probes, err)
	}
	_, err = Parse("rawtracepoint:nonsense:sys_exit")
	if m, ok := err.(*MissingError); !ok || m.Message() != "No matches for rawtracepoint nonsense:sys_exit." {
		t.Errorf("Parse(rawtracepoint:nonsense:sys_exit) error %v, want a MissingError", err)
	}
}

// TestParseFentryMissing checks that fentry of a function the kernel
// lacks is missing, as missing_probes judges it, and that one it has
// parses.
func TestParseFentryMissing(t *testing.T) {
	if _, err := os.Stat("/proc/kallsyms"); err != nil {
		testutils.Skip(t, "no /proc/kallsyms")
	}
	_, err := Parse("fentry:no_such_function_here")
	if m, ok := err.(*MissingError); !ok || m.Message() != "No matches for fentry no_such_function_here." {
		t.Errorf("Parse(fentry:no_such_function_here) error %v, want a MissingError", err)
	}
	if probes, err := Parse("fexit:vfs_read"); err != nil || len(probes) != 1 || probes[0].Name != "fexit:vfs_read" {
		t.Errorf("Parse(fexit:vfs_read) = %v, %v; want the one probe", probes, err)
	}
}

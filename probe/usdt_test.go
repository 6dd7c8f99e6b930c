package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// buildUSDTProgram compiles a C program whose probes are one:hit and
// two:hit (a name two providers share), and two:other twice.
func buildUSDTProgram(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testutils.Skip(t, "gcc is not installed")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		testutils.Skip(t, "<sys/sdt.h> is not installed (Debian: systemtap-sdt-dev)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	err := os.WriteFile(src, []byte(`#include <sys/sdt.h>
int main(int argc, char **argv) {
	DTRACE_PROBE1(one, hit, argc);
	DTRACE_PROBE2(two, hit, argc, argv);
	DTRACE_PROBE(two, other);
	DTRACE_PROBE(two, other);
	return 0;
}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func TestParseUsdt(t *testing.T) {
	bin := buildUSDTProgram(t)
	name := func(s string) string { return "usdt:" + bin + ":" + s }
	tests := []struct {
		text string
		want []string // probe names, one per site
	}{
		{"usdt:BIN:one:hit", []string{name("one:hit")}},
		{"U:BIN:two:hit", []string{name("two:hit")}},
		{"usdt:BIN:other", []string{name("two:other"), name("two:other")}},
		{"usdt:BIN:*", []string{name("one:hit"), name("two:hit"), name("two:other"), name("two:other")}},
		{"usdt:BIN:hi*", []string{name("one:hit"), name("two:hit")}},
		{"usdt:BIN:t*:*", []string{name("two:hit"), name("two:other"), name("two:other")}},
		{"usdt:BIN:nope", nil},
		{"usdt:BIN:one:nope", nil},
	}
	for _, tt := range tests {
		text := strings.Replace(tt.text, "BIN", bin, 1)
		t.Run(tt.text, func(t *testing.T) {
			probes, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range probes {
				got = append(got, p.Name)
				if p.Kind != Usdt || p.Target != bin || p.USDT == nil || p.USDT.LocationOffset == 0 {
					t.Errorf("%s: %+v", p.Name, p)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) = %q, want %q", text, got, tt.want)
			}
		})
	}
	// The two sites of two:other are different places.
	probes, err := Parse("usdt:" + bin + ":two:other")
	if err != nil || len(probes) != 2 || probes[0].USDT.Location == probes[1].USDT.Location {
		t.Errorf("two:other: %v, %+v", err, probes)
	}
}

func TestParseUsdtErrors(t *testing.T) {
	bin := buildUSDTProgram(t)
	tests := []struct{ text, want string }{
		{"usdt:BIN:hit", "namespace for usdt:BIN:hit not specified, matched 2 probes (usdt:BIN:one:hit, usdt:BIN:two:hit)"},
		{"usdt:BIN::hit", "namespace for usdt:BIN:hit not specified, matched 2 probes"},
		{"usdt:BIN", "usdt probe must have the form usdt:binary:[provider:]name"},
		{"usdt:BIN:a:b:c", "usdt probe must have the form"},
		{"usdt::two:hit", "usdt probe must name its binary"},
		{"usdt:BIN:two:", "usdt probe must have a target function or wildcard"},
		{"usdt:/nonexistent/prog:x", "/nonexistent/prog does not exist"},
	}
	for _, tt := range tests {
		text := strings.ReplaceAll(tt.text, "BIN", bin)
		want := strings.ReplaceAll(tt.want, "BIN", bin)
		t.Run(tt.text, func(t *testing.T) {
			_, err := Parse(text)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Parse(%q) error %v, want %q", text, err, want)
			}
		})
	}
}

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// multiFuncs is how many functions multiProgram has for a wildcard.
const multiFuncs = 64

// multiProgram waits for the tracer, then calls each function mN N%3+1
// times; mN(x) returns N + x.
func multiProgram() string {
	var b strings.Builder
	b.WriteString("#include <unistd.h>\n")
	for i := range multiFuncs {
		fmt.Fprintf(&b, "__attribute__((noinline)) int gtm%d(int x) { return %d + x; }\n", i, i)
	}
	b.WriteString("int main(void) {\n\tusleep(300000);\n\tint s = 0;\n")
	for i := range multiFuncs {
		fmt.Fprintf(&b, "\tfor (int i = 0; i < %d; i++) s += gtm%d(0);\n", i%3+1, i)
	}
	b.WriteString("\treturn s == 0;\n}\n")
	return b.String()
}

// TestUprobeMulti traces every function of a program with one wildcard,
// attached through one uprobe_multi link, and checks that each event
// knows its own probe and func, with --no-feature uprobe_multi (a link
// per function) giving the same. A probe that reads args stays one
// program per function.
func TestUprobeMulti(t *testing.T) {
	testutils.RequireRoot(t)
	if err := features.HaveBPFLinkUprobeMulti(); err != nil {
		testutils.Skip(t, "this kernel has no uprobe_multi links: "+err.Error())
	}
	bin := harness.BuildC(t, "multi", map[string]string{"multi.c": multiProgram()}, "-g")
	want := func(kind string, value func(i int) string) string {
		var lines []string
		for i := range multiFuncs {
			lines = append(lines, fmt.Sprintf("@[%s:%s:gtm%d, gtm%d]: %s", kind, bin, i, i, value(i)))
		}
		return strings.Join(lines, "\n")
	}
	calls := func(i int) string { return fmt.Sprint(i%3 + 1) }
	for _, tt := range []struct {
		name   string
		args   []string
		script string
		links  int // uprobe_multi links on bin
		want   string
	}{
		{"uprobe", nil, "uprobe:BIN:gtm* { @[probe, func] = count(); }", 1, want("uprobe", calls)},
		{"uretprobe", nil, "uretprobe:BIN:gtm* { @[probe, func] = sum(retval); }",
			1, want("uretprobe", func(i int) string { return fmt.Sprint(i * (i%3 + 1)) })},
		{"no uprobe_multi", []string{"--no-feature", "uprobe_multi"}, "uprobe:BIN:gtm* { @[probe, func] = count(); }",
			0, want("uprobe", calls)},
		{"args", nil, "uprobe:BIN:gtm* /args.x == 0/ { @[probe, func] = count(); }", 0, want("uprobe", calls)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := strings.ReplaceAll(tt.script, "BIN", bin)
			var out strings.Builder
			tracer := exec.Command(harness.Bin(), append(tt.args, "-v", "-e", script)...)
			tracer.Stdout = &out
			attached := func(l string) bool { return strings.HasPrefix(l, "attached ") }
			go harness.Drain(harness.StartWait(t, tracer, harness.Stderr, attached, nil))
			if n := multiLinks(t, bin); n != tt.links {
				t.Errorf("%d uprobe_multi links on %s, want %d", n, bin, tt.links)
			}
			if err := exec.Command(bin).Run(); err != nil {
				t.Fatalf("%s: %v", bin, err)
			}
			tracer.Process.Signal(syscall.SIGINT)
			tracer.Wait()
			if got := sortedMapLines(out.String()); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// multiLinks counts the uprobe_multi links on the file bin, of 64
// functions each.
func multiLinks(t *testing.T, bin string) int {
	t.Helper()
	ids, err := harness.Links()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id := range ids {
		l, err := link.NewFromID(id)
		if err != nil {
			continue // gone meanwhile
		}
		info, err := l.Info()
		l.Close()
		if err != nil || info.Type != link.UprobeMultiType {
			continue
		}
		if m := info.UprobeMulti(); m != nil && filepath.Clean(m.File) == bin {
			if m.Count != multiFuncs {
				t.Errorf("a uprobe_multi link on %s has %d functions, want %d", bin, m.Count, multiFuncs)
			}
			n++
		}
	}
	return n
}

// sortedMapLines is the map lines of out, "@[..., gtmN]: V", in the
// order of the functions' numbers, then any other map lines.
func sortedMapLines(out string) string {
	lines := make([]string, multiFuncs)
	var extra []string
	for _, l := range strings.Split(out, "\n") {
		m := funcKey.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "@") {
				extra = append(extra, l)
			}
			continue
		}
		i, _ := strconv.Atoi(m[1])
		if i < multiFuncs && lines[i] == "" {
			lines[i] = l
		} else {
			extra = append(extra, l)
		}
	}
	return strings.Join(append(lines, extra...), "\n")
}

// funcKey finds the function's number in a map line.
var funcKey = regexp.MustCompile(`^@\[.*, gtm(\d+)\]: `)

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
	"time"

	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// multiFuncs is how many functions multiProgram has for a wildcard.
const multiFuncs = 64

// multiProgram reads a byte of its input, then calls each function mN N%3+1
// times; mN(x) returns N + x.
func multiProgram() string {
	var b strings.Builder
	b.WriteString("#include <unistd.h>\n")
	for i := range multiFuncs {
		fmt.Fprintf(&b, "__attribute__((noinline)) int gtm%d(int x) { return %d + x; }\n", i, i)
	}
	b.WriteString("int main(void) {\n\tchar c;\n\tif (read(0, &c, 1) != 1) return 1;\n\tint s = 0;\n")
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
	t.Run("pid", func(t *testing.T) { testUprobeMultiPid(t, bin, want("uprobe", calls)) })
	t.Run("order", func(t *testing.T) {
		// gtm5 runs three times: each time, the probes run in the script's order.
		for _, kind := range []string{"uprobe", "uretprobe"} {
			script := fmt.Sprintf(`%s:%s:gtm5 { printf("a"); } %[1]s:%[2]s:gtm* /func == "gtm5"/ { printf("b"); } %[1]s:%[2]s:gtm5 { printf("c"); }`, kind, bin)
			tracer := exec.Command(harness.Bin(), "-e", script, "-c", bin)
			tracer.Stdin = strings.NewReader("x") // the -c command's
			r := harness.RunCmd(t, tracer, time.Minute)
			if got := strings.TrimSpace(harness.StripAttaching(r.Stdout)); r.Code != 0 || got != "abcabcabc" {
				t.Errorf("%s: exit %d, got %q, want abcabcabc\n%s", kind, r.Code, got, r.Stderr)
			}
		}
	})
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
			waitNoMultiLinks(t, bin)
			script := strings.ReplaceAll(tt.script, "BIN", bin)
			var out strings.Builder
			tracer := exec.Command(harness.Bin(), append(tt.args, "-v", "-e", script)...)
			tracer.Stdout = &out
			attached := func(l string) bool { return strings.HasPrefix(l, "attached ") }
			go harness.Drain(harness.StartWait(t, tracer, harness.Stderr, attached, nil))
			if n := len(multiLinkPids(t, bin)); n != tt.links {
				t.Errorf("%d uprobe_multi links on %s, want %d", n, bin, tt.links)
			}
			target := exec.Command(bin)
			target.Stdin = strings.NewReader("x")
			if err := target.Run(); err != nil {
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

// testUprobeMultiPid traces the functions of one process, -p, whose
// uprobe_multi link says so.
func testUprobeMultiPid(t *testing.T, bin, want string) {
	waitNoMultiLinks(t, bin)
	target := exec.Command(bin)
	in, err := target.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Process.Kill(); target.Wait() })
	var out strings.Builder
	tracer := exec.Command(harness.Bin(), "-v", "-p", strconv.Itoa(target.Process.Pid), "-e", "uprobe:"+bin+":gtm* { @[probe, func] = count(); }")
	tracer.Stdout = &out
	attached := func(l string) bool { return strings.HasPrefix(l, "attached ") }
	go harness.Drain(harness.StartWait(t, tracer, harness.Stderr, attached, nil))
	t.Cleanup(func() { tracer.Process.Kill(); tracer.Wait() })
	pids := multiLinkPids(t, bin)
	if len(pids) != 1 || pids[0] != uint32(target.Process.Pid) {
		t.Errorf("uprobe_multi links on %s for pids %v, want one for %d", bin, pids, target.Process.Pid)
	}
	in.Write([]byte("x"))
	in.Close()
	target.Wait()
	tracer.Wait() // it ends with the process
	if got := sortedMapLines(out.String()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// waitNoMultiLinks waits for the kernel to release the uprobe_multi
// links on bin of earlier runs: it does so after gtrace has exited.
func waitNoMultiLinks(t *testing.T, bin string) {
	t.Helper()
	for start := time.Now(); len(multiLinkPids(t, bin)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("uprobe_multi links on %s a minute after gtrace exited", bin)
		}
	}
}

// multiLinkPids lists the pids (0 for every process) of the
// uprobe_multi links on the file bin, of multiFuncs functions each.
func multiLinkPids(t *testing.T, bin string) []uint32 {
	t.Helper()
	ids, err := harness.Links()
	if err != nil {
		t.Fatal(err)
	}
	var pids []uint32
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
			pid, _ := m.Pid()
			pids = append(pids, pid)
		}
	}
	return pids
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

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/chromium"
	"gtrace/tests/internal/harness"
)

// hotProgram spends its time in hot, called from main, and a tenth of
// that in cold, for the seconds its argument says.
const hotProgram = `#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot(void) { for (int i = 0; i < 1000000; i++) sink += i; }
__attribute__((noinline)) void cold(void) { for (int i = 0; i < 100000; i++) sink += i; }
int main(int argc, char **argv)
{
	time_t end = time(NULL) + atoi(argv[1]);
	while (time(NULL) < end) { hot(); cold(); }
	return 0;
}
`

// profileHot samples hotProgram with script, with the extra flags, and
// returns what gtrace printed.
func profileHot(t *testing.T, script string, flags ...string) string {
	t.Helper()
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "hot", map[string]string{"hot.c": hotProgram}, "-O0", "-fno-omit-frame-pointer")
	args := append([]string{"-q", "-c", bin + " 2", "-e", script}, flags...)
	r := harness.RunTimeout(t, 60*time.Second, harness.Bin(), args...)
	if r.Code != 0 {
		t.Fatalf("gtrace %q: exit code %d, stderr:\n%s", args, r.Code, r.Stderr)
	}
	return r.Stdout
}

// hottest returns the folded line of the largest count.
func hottest(t *testing.T, folded string) (stack string, count int) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.Atoi(line[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("not a folded line: %q in\n%s", line, folded)
		}
		if n > count {
			stack, count = line[:i], n
		}
	}
	return stack, count
}

// TestStackOutputsProfile samples a busy program's user stacks at 999
// Hz: the folded output's hottest stack is main;hot, and pprof's top
// function in the profile is hot.
func TestStackOutputsProfile(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "hot.pb.gz")
	out := profileHot(t, `profile:hz:999 /pid == cpid/ { @[ustack] = count(); }`,
		"-f", "folded", "--pprof", profile, "--flamegraph", filepath.Join(dir, "hot.html"))
	stack, count := hottest(t, out)
	if !strings.HasSuffix(stack, "main;hot") || count < 100 {
		t.Errorf("hottest stack %q, %d samples; want one ending in main;hot, of 100 or more, in\n%s", stack, count, out)
	}
	top := goToolPprof(t, "-top", profile)
	if fn := topFunction(top); fn != "hot" {
		t.Errorf("pprof's top function is %q, want hot:\n%s", fn, top)
	}
	flameGraphInBrowser(t, filepath.Join(dir, "hot.html"))
}

// TestStackOutputsKeys folds a key of comm, a user and a kernel stack:
// comm is the root frame, the user frames follow; the profile labels
// each sample with its comm.
func TestStackOutputsKeys(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "keys.pb.gz")
	out := profileHot(t, `profile:hz:999 /pid == cpid/ { @[comm, ustack, kstack] = count(); }`,
		"-f", "folded", "--pprof", profile, "--flamegraph", filepath.Join(dir, "keys.svg"))
	stack, _ := hottest(t, out)
	if !regexp.MustCompile(`^hot;(.+;)?main;hot$`).MatchString(stack) {
		t.Errorf("hottest stack %q, want hot;...main;hot, in\n%s", stack, out)
	}
	// A kernel stack under a user one follows a "-" frame.
	if strings.Contains(out, ";-;") && !regexp.MustCompile(`(?m)^hot;[^ ]*;-;[^ ;-][^ ]* \d+$`).MatchString(out) {
		t.Errorf("kernel frames not after a - frame:\n%s", out)
	}
	// Until the held -c child execs hot it is the shell that holds it, so
	// a sample may fall on sh; every other label is hot's.
	tags := goToolPprof(t, "-tags", profile)
	labels := regexp.MustCompile(`(?m)^\s+(\d+) \(\s*[\d.]+%\): (\S+)$`).FindAllStringSubmatch(tags, -1)
	samples := map[string]int{}
	for _, l := range labels {
		n, _ := strconv.Atoi(l[1])
		samples[l[2]] += n
	}
	others := len(samples) - 1
	if samples["sh"] > 0 {
		others--
	}
	if samples["hot"] < 100 || others > 0 || samples["sh"] > 2 {
		t.Errorf("the profile's comm labels are not hot's (and at most 2 of the holding sh):\n%s", tags)
	}
	flameGraphInBrowser(t, filepath.Join(dir, "keys.svg"))
}

// goToolPprof runs go tool pprof with args, skipping without go.
func goToolPprof(t *testing.T, args ...string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if goBin, err = exec.LookPath("/usr/local/go/bin/go"); err != nil {
			testutils.Skip(t, "no go tool to read the pprof profile with")
		}
	}
	cmd := exec.Command(goBin, append([]string{"tool", "pprof"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// topFunction is the function of the first row of pprof -top.
func topFunction(top string) string {
	lines := strings.Split(top, "\n")
	for i, line := range lines {
		if strings.Contains(line, "flat%") && i+1 < len(lines) {
			fields := strings.Fields(lines[i+1])
			return fields[len(fields)-1]
		}
	}
	return ""
}

// flameGraphInBrowser opens a flame graph in Chromium, hovers over and
// clicks the widest hot frame, and checks that it zoomed to the full
// width; a search for hot colors it; Reset Zoom undoes the zoom. A
// screenshot of the zoomed graph is left in the test's directory.
func flameGraphInBrowser(t *testing.T, path string) {
	t.Helper()
	p := chromium.Open(t, "file://"+path, 1280, 1000)
	// The widest frame named hot short of the full width (comm is hot
	// too), its middle on the screen, and the graph's width.
	find := `(() => {
		const width = +document.getElementById("flamegraph").getAttribute("data-width");
		const hot = [...document.querySelectorAll('g.frame[data-name="hot"]')]
			.filter(g => +g.getAttribute("data-w") < width)
			.sort((a, b) => b.getAttribute("data-w") - a.getAttribute("data-w"))[0];
		hot.id = "clicked";
		const r = hot.querySelector("rect").getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2, width];
	})()`
	xy, ok := p.Eval(find).([]any)
	if !ok || len(xy) != 3 {
		t.Fatalf("no hot frame in the flame graph: %v", xy)
	}
	x, y, width := xy[0].(float64), xy[1].(float64), xy[2].(float64)
	clickedWidth := `+document.querySelector("#clicked rect").getAttribute("width")`

	p.Mouse(x, y, false)
	if details := p.Eval(`document.getElementById("details").textContent`).(string); !strings.HasPrefix(details, "hot (") {
		t.Errorf("hovering over hot shows %q", details)
	}
	before := p.Eval(clickedWidth).(float64)
	p.Mouse(x, y, true)
	if got := p.Eval(clickedWidth).(float64); got != width {
		t.Errorf("clicked frame's width %v, was %v; want the full %v", got, before, width)
	}
	if p.Eval(`document.getElementById("reset").classList.contains("hidden")`).(bool) {
		t.Error("Reset Zoom is hidden after a zoom")
	}
	shot := filepath.Join(t.TempDir(), filepath.Base(path)+"-zoomed.png")
	f, err := os.Create(shot)
	if err != nil {
		t.Fatal(err)
	}
	p.Screenshot(f)
	f.Close()
	t.Logf("screenshot of the zoomed flame graph: %s", shot)

	p.Eval(`document.getElementById("search").focus()`)
	p.Type("^hot$")
	if fill := p.Eval(`document.querySelector("#clicked rect").getAttribute("fill")`).(string); fill != "rgb(230,0,230)" {
		t.Errorf("a search for hot leaves it %s", fill)
	}
	if matched := p.Eval(`document.getElementById("matched").textContent`).(string); !strings.HasPrefix(matched, "Matched: ") {
		t.Errorf("the search shows %q", matched)
	}
	p.Eval(`document.getElementById("reset").dispatchEvent(new MouseEvent("click"))`)
	if got := p.Eval(clickedWidth).(float64); got != before {
		t.Errorf("after Reset Zoom the frame's width is %v, want %v", got, before)
	}
}

// TestStackOutputsErrors checks that stack outputs a program cannot give
// fail before anything is attached, with a message.
func TestStackOutputsErrors(t *testing.T) {
	testutils.RequireRoot(t)
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--pprof", filepath.Join(dir, "p.pb.gz"), "-e", `profile:hz:99 { @[kstack] = hist(1); }`},
			"ERROR: map @ is keyed by a stack but holds hist() values: folded stacks, flame graphs and pprof profiles need count(), sum() or integer values\n"},
		{[]string{"-f", "folded", "-e", `BEGIN { @s[ustack] = "x"; exit(); }`}, "ERROR: map @s is keyed by a stack but holds string"},
		{[]string{"--flamegraph", filepath.Join(dir, "f.svg"), "-e", `BEGIN { @x[pid] = count(); exit(); }`},
			"ERROR: --flamegraph and --pprof need a map keyed by a stack (kstack or ustack), and the program has none\n"},
		{[]string{"--pprof", filepath.Join(dir, "no", "p.pb.gz"), "-e", `profile:hz:99 { @[kstack] = count(); }`},
			"ERROR: --pprof: open " + filepath.Join(dir, "no", "p.pb.gz") + ": no such file or directory\n"},
	}
	for _, tt := range tests {
		r := harness.Gtrace(t, tt.args...)
		if r.Code != 1 || !strings.HasPrefix(r.Stderr, tt.want) {
			t.Errorf("gtrace %q: exit code %d, stderr %q; want 1 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
	}
}

package tools

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// The test programs wait for a byte on stdin before they work, so that
// the tracers attach to them first, and then say "done" and wait for the
// end of stdin, so that the tracers read their symbols before they exit.
// Their functions are not inlined, and built with frame pointers.
const (
	// callsProgram calls tick 7 times, tock 3 times and getppid 5 times.
	callsProgram = `
#include <unistd.h>
int n;
__attribute__((noinline)) void tick(void) { n++; }
__attribute__((noinline)) void tock(void) { n--; }
int main(void) {
	char c;
	if (read(0, &c, 1) < 0) return 1;
	for (int i = 0; i < 7; i++) tick();
	for (int i = 0; i < 3; i++) tock();
	for (int i = 0; i < 5; i++) getppid();
	write(1, "done\n", 5);
	return read(0, &c, 1);
}
`
	// slowProgram calls slow 5 times, each taking 20 ms.
	slowProgram = `
#include <unistd.h>
__attribute__((noinline)) void slow(void) { usleep(20000); }
int main(void) {
	char c;
	if (read(0, &c, 1) < 0) return 1;
	for (int i = 0; i < 5; i++) slow();
	write(1, "done\n", 5);
	return read(0, &c, 1);
}
`
	// pathsProgram calls target 3 times through path_a and 5 times
	// through path_b.
	pathsProgram = `
#include <unistd.h>
__attribute__((noinline)) void target(void) { }
__attribute__((noinline)) void path_a(void) { target(); }
__attribute__((noinline)) void path_b(void) { target(); }
int main(void) {
	char c;
	if (read(0, &c, 1) < 0) return 1;
	for (int i = 0; i < 3; i++) path_a();
	for (int i = 0; i < 5; i++) path_b();
	write(1, "done\n", 5);
	return read(0, &c, 1);
}
`
	// busyProgram spins for 2 seconds, ten times longer in hot than in
	// cold.
	busyProgram = `
#include <time.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot(void) { for (int i = 0; i < 1000000; i++) sink += i; }
__attribute__((noinline)) void cold(void) { for (int i = 0; i < 100000; i++) sink += i; }
int main(void) {
	char c;
	if (read(0, &c, 1) < 0) return 1;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		hot();
		cold();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 2);
	write(1, "done\n", 5);
	return read(0, &c, 1);
}
`
	// sleeperProgram sleeps 5 times 100 ms in nap and 5 times 50 ms in
	// doze. Both go through sleep_ms: the caller of a libc function
	// without a frame of its own is the frame an unwinder by frame
	// pointers skips.
	sleeperProgram = `
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) void sleep_ms(long ms) { struct timespec ts = {0, ms * 1000000}; nanosleep(&ts, 0); }
__attribute__((noinline)) void nap(void) { sleep_ms(100); }
__attribute__((noinline)) void doze(void) { sleep_ms(50); }
int main(void) {
	char c;
	if (read(0, &c, 1) < 0) return 1;
	for (int i = 0; i < 5; i++) { nap(); doze(); }
	write(1, "done\n", 5);
	return read(0, &c, 1);
}
`
)

// buildProgram builds one of the test programs as BCC's users build
// theirs to profile them: without optimization, with frame pointers.
func buildProgram(t *testing.T, name, src string) string {
	return harness.BuildC(t, name, map[string]string{name + ".c": src}, "-O0", "-fno-omit-frame-pointer")
}

// gated is a test program started and waiting for its go.
type gated struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startGated starts bin, which waits for a byte on its stdin, and lets
// it exit at the end of the test.
func startGated(t *testing.T, bin string) *gated {
	t.Helper()
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return &gated{cmd, in, bufio.NewReader(out)}
}

// pid is the program's process id, as a flag's value.
func (g *gated) pid() string { return strconv.Itoa(g.cmd.Process.Pid) }

// run lets the program work, and waits until it is done.
func (g *gated) run(t *testing.T) {
	t.Helper()
	g.in.Write([]byte{'\n'})
	if l, err := g.out.ReadString('\n'); l != "done\n" {
		t.Fatalf("%s said %q, %v; want done", g.cmd.Path, l, err)
	}
}

// tracer is a tracing command in the background, its stdout read line
// by line.
type tracer struct {
	cmd    *exec.Cmd
	lines  <-chan string
	stderr *strings.Builder
}

// startTracer starts a tracer and returns once it prints its first line,
// which a tool prints once it is attached. With settle, it waits that
// long instead: a tracer that prints nothing first.
func startTracer(t *testing.T, settle time.Duration, bin string, args ...string) *tracer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	tr := &tracer{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = tr.stderr
	if settle == 0 {
		tr.lines = harness.StartWait(t, cmd, harness.Stdout, func(string) bool { return true }, nil)
	} else {
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			b, _ := io.ReadAll(out)
			for _, l := range strings.Split(string(b), "\n") {
				lines <- l
			}
			close(lines)
		}()
		tr.lines = lines
		time.Sleep(settle)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return tr
}

// stop interrupts the tracer, as Ctrl-C does, and returns what it
// printed after its first line.
func (tr *tracer) stop(t *testing.T) string {
	t.Helper()
	tr.cmd.Process.Signal(syscall.SIGINT)
	var out []string
	for l := range tr.lines {
		out = append(out, l)
	}
	if err := tr.cmd.Wait(); err != nil {
		t.Errorf("%s %q: %v; stderr:\n%s", tr.cmd.Path, tr.cmd.Args[1:], err, tr.stderr)
	}
	return strings.Join(out, "\n")
}

// traceRun runs a tool with -p on one run of prog, and returns what it
// printed after its first line.
func traceRun(t *testing.T, prog *gated, name string, args ...string) string {
	t.Helper()
	tr := startTracer(t, 0, harness.Bin(), append([]string{"tools", name, "-p", prog.pid()}, args...)...)
	prog.run(t)
	return tr.stop(t)
}

// jsonMaps reads the maps of -j output: name, key, value.
func jsonMaps(t *testing.T, out string) map[string]map[string]json.RawMessage {
	maps := map[string]map[string]json.RawMessage{}
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Type string
			Data map[string]json.RawMessage
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "map" && rec.Type != "hist" {
			continue
		}
		for name, v := range rec.Data {
			var m map[string]json.RawMessage
			if json.Unmarshal(v, &m) != nil {
				m = map[string]json.RawMessage{"": v}
			}
			maps[name] = m
		}
	}
	return maps
}

// folded reads -f folded output: the value of each stack.
func folded(out string) map[string]int {
	stacks := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		i := strings.LastIndexByte(line, ' ')
		if n, err := strconv.Atoi(line[i+1:]); i > 0 && err == nil && strings.Contains(line, ";") {
			stacks[line[:i]] += n
		}
	}
	return stacks
}

// TestFunccountUprobes counts a program's functions by a wildcard and by
// a regular expression: exactly the calls it makes, as bpftrace counts
// them at the same time on the attach point the pattern stands for.
func TestFunccountUprobes(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	bin := buildProgram(t, "calls", callsProgram)
	tests := []struct {
		args  []string
		probe string // the attach point for bpftrace
		want  map[string]string
	}{
		{[]string{bin + ":t*ck"}, "uprobe:" + bin + ":t*ck", map[string]string{"uprobe:" + bin + ":tick": "7", "uprobe:" + bin + ":tock": "3"}},
		{[]string{"-r", bin + ":^to.*"}, "uprobe:" + bin + ":to*", map[string]string{"uprobe:" + bin + ":tock": "3"}},
	}
	line := regexp.MustCompile(`(?m)^@calls\[(\S+)\]: (\d+)$`)
	for _, tt := range tests {
		prog := startGated(t, bin)
		// -q: the first line is BEGIN's, printed once the probes are
		// attached.
		ref := startTracer(t, 0, bpftrace, "-q", "-e", `BEGIN { printf("ready\n"); } `+tt.probe+` /pid == `+prog.pid()+`/ { @calls[probe] = count(); }`)
		out := traceRun(t, prog, "funccount", append([]string{"-j"}, tt.args...)...)
		got := map[string]string{}
		for k, v := range jsonMaps(t, out)["@calls"] {
			got[k] = string(v)
		}
		refGot := map[string]string{}
		for _, m := range line.FindAllStringSubmatch(ref.stop(t), -1) {
			refGot[m[1]] = m[2]
		}
		if !maps.Equal(got, tt.want) || !maps.Equal(refGot, tt.want) {
			t.Errorf("%q: counts %v, bpftrace's %v, want %v; output:\n%s", tt.args, got, refGot, tt.want, out)
		}
	}
}

// TestFunccountTracepointPid counts the getppid system calls of one
// process, by -p: exactly its 5, whatever the machine's other processes
// call.
func TestFunccountTracepointPid(t *testing.T) {
	testutils.RequireRoot(t)
	out := traceRun(t, startGated(t, buildProgram(t, "calls", callsProgram)), "funccount", "-j", "t:syscalls:sys_enter_getppid")
	if got := string(jsonMaps(t, out)["@calls"]["tracepoint:syscalls:sys_enter_getppid"]); got != "5" {
		t.Errorf("%s getppid calls, want 5; output:\n%s", got, out)
	}
}

// TestFunclatency times a function that sleeps 20 ms, 5 times: 5 calls
// of 16 ms or more (a loaded machine may make one longer), in the
// buckets where libbpf-tools' funclatency, traced at the same time, puts
// them.
func TestFunclatency(t *testing.T) {
	testutils.RequireRoot(t)
	bin := buildProgram(t, "slow", slowProgram)
	prog := startGated(t, bin)
	// libbpf-tools' funclatency names a function of the process of -p as
	// :slow, and prints nothing through a pipe until it ends: give it
	// time to attach.
	ref := startTracer(t, 3*time.Second, libbpfToolPath(t, "funclatency"), "-m", "-p", prog.pid(), ":slow")
	out := traceRun(t, prog, "funclatency", "-m", "-j", bin+":slow")
	var buckets []struct{ Min, Count int }
	json.Unmarshal(jsonMaps(t, out)["@msecs"][""], &buckets)
	got, calls := map[int]int{}, 0
	for _, b := range buckets {
		got[b.Min] = b.Count
		if b.Min >= 16 {
			calls += b.Count
		}
	}
	if calls != 5 || len(got) == 0 {
		t.Errorf("histogram %v, want 5 calls of 16 ms or more; output:\n%s", got, out)
	}
	refOut := ref.stop(t)
	refGot := map[int]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(\d+) -> \d+\s+: ([1-9]\d*) `).FindAllStringSubmatch(refOut, -1) {
		min, _ := strconv.Atoi(m[1])
		refGot[min], _ = strconv.Atoi(m[2])
	}
	if !maps.Equal(got, refGot) {
		t.Errorf("buckets %v, libbpf-tools' funclatency's %v:\n%s", got, refGot, refOut)
	}
}

// TestStackcount counts the user stacks of a function called from two
// paths, folded: 3 through path_a, 5 through path_b, as bpftrace counts
// them at the same time.
func TestStackcount(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	bin := buildProgram(t, "paths", pathsProgram)
	prog := startGated(t, bin)
	// -q: the first line is BEGIN's, printed once the probe is attached.
	ref := startTracer(t, 0, bpftrace, "-q", "-e", `BEGIN { printf("ready\n"); } uprobe:`+bin+`:target /pid == `+prog.pid()+`/ { @[ustack] = count(); }`)
	got := folded(traceRun(t, prog, "stackcount", "-U", "-f", bin+":target"))
	want := map[string]int{"main;path_a;target": 3, "main;path_b;target": 5}
	n := 0
	for stack, count := range got {
		for w, c := range want {
			if strings.HasSuffix(stack, ";"+w) && count == c {
				n++
			}
		}
	}
	if len(got) != 2 || n != 2 {
		t.Errorf("stacks %v, want ...;%v", got, want)
	}
	refOut := ref.stop(t)
	for path, c := range map[string]int{"path_a": 3, "path_b": 5} {
		stack := regexp.MustCompile(`(?m)@\[\n\s+target\+\d+\n\s+` + path + `\+\d+\n[^\]]*\]: ` + strconv.Itoa(c) + `$`)
		if !stack.MatchString(refOut) {
			t.Errorf("bpftrace did not count %d stacks through %s:\n%s", c, path, refOut)
		}
	}
}

// TestProfile samples a busy program: its hottest user stack is in hot,
// as bpftrace's, sampling at the same time, finds, and the flame graph
// written alongside has it.
func TestProfile(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	prog := startGated(t, buildProgram(t, "busy", busyProgram))
	ref := startTracer(t, 0, bpftrace, "-e", "profile:hz:99 /pid == "+prog.pid()+"/ { @[ustack] = count(); }")
	svg := filepath.Join(t.TempDir(), "cpu.svg")
	out := traceRun(t, prog, "profile", "-U", "-f", "-F", "99", "--flamegraph", svg)
	stacks := folded(out)
	hottest, max := "", 0
	for stack, n := range stacks {
		if n > max {
			hottest, max = stack, n
		}
	}
	// hot takes 10 times as long as cold; a loaded machine may give the
	// program much less than the 2 s at 99 Hz.
	cold := stacks["busy;__libc_start_call_main;main;cold"]
	if !strings.HasPrefix(hottest, "busy;") || !strings.HasSuffix(hottest, ";main;hot") || max < 20 || max < 3*cold {
		t.Errorf("hottest stack %q with %d samples (cold %d), want ...;main;hot with at least 20, and 3 times cold's; output:\n%s", hottest, max, cold, out)
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.Contains(string(b), "<title>hot (") {
		t.Errorf("the flame graph lacks hot: %v", err)
	}
	refOut := ref.stop(t)
	refMax, refLeaf := 0, ""
	for _, m := range regexp.MustCompile(`@\[\n\s+(\w+)\+\d+[^\]]*\]: (\d+)`).FindAllStringSubmatch(refOut, -1) {
		if n, _ := strconv.Atoi(m[2]); n > refMax {
			refMax, refLeaf = n, m[1]
		}
	}
	if refLeaf != "hot" {
		t.Errorf("bpftrace's hottest user stack is in %q, want hot:\n%s", refLeaf, refOut)
	}
}

// TestOffcputime attributes a program's sleeps to their stacks: 500 ms
// under nap, 250 ms under doze, within 10 %; libbpf-tools' offcputime,
// traced at the same time, counts the same total in clock_nanosleep.
func TestOffcputime(t *testing.T) {
	testutils.RequireRoot(t)
	prog := startGated(t, buildProgram(t, "sleeper", sleeperProgram))
	// libbpf-tools' offcputime prints nothing until it ends: give it
	// time to attach.
	ref := startTracer(t, 3*time.Second, libbpfToolPath(t, "offcputime"), "-p", prog.pid())
	out := traceRun(t, prog, "offcputime", "-f")
	us := map[string]int{}
	total := 0
	for stack, n := range folded(out) {
		for _, f := range []string{"nap", "doze"} {
			if strings.Contains(stack, ";main;"+f+";") && strings.Contains(stack, "clock_nanosleep") {
				us[f] += n
				total += n
			}
		}
	}
	within := func(got, want int) bool { return got >= want*9/10 && got <= want*11/10 }
	if !within(us["nap"], 500000) || !within(us["doze"], 250000) {
		t.Errorf("off-CPU us %v, want nap 500000 and doze 250000 within 10%%; output:\n%s", us, out)
	}
	refTotal := 0
	refOut := ref.stop(t)
	for _, block := range strings.Split(refOut, "\n\n") {
		if strings.Contains(block, "clock_nanosleep") {
			f := strings.Fields(block)
			n, _ := strconv.Atoi(f[len(f)-1])
			refTotal += n
		}
	}
	if !within(total, refTotal) {
		t.Errorf("gtrace counts %d us in nanosleep, libbpf-tools' offcputime %d:\n%s", total, refTotal, refOut)
	}
}

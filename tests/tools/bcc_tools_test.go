package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// The tests of gtrace's own tools, `gtrace tools NAME`, that BCC has
// too: each on a workload the test drives, and, where they run here, side
// by side with libbpf-tools' and bpftrace 0.17's tools on the same
// workload.

// background is a tool running until the test stops it.
type background struct {
	name   string
	cmd    *exec.Cmd
	stderr *strings.Builder
	// lines are those printed after the header, read as they come,
	// lest a tool that prints the whole machine's events block and lose
	// some; done is closed when they end.
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

// startTool runs bin with args in the background and returns once it
// prints a line starting with ready, its header, printed once it has
// attached.
func startTool(t *testing.T, ready, bin string, args ...string) *background {
	t.Helper()
	b := &background{name: filepath.Base(bin) + " " + strings.Join(args, " "), cmd: exec.Command(bin, args...),
		stderr: &strings.Builder{}, done: make(chan struct{})}
	b.cmd.Stderr = b.stderr
	lines := harness.StartWait(t, b.cmd, harness.Stdout, func(l string) bool { return strings.HasPrefix(l, ready) }, nil)
	go func() {
		for l := range lines {
			b.mu.Lock()
			b.lines = append(b.lines, l)
			b.mu.Unlock()
		}
		close(b.done)
	}()
	t.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			b.cmd.Process.Kill()
			b.cmd.Wait()
		}
	})
	return b
}

// await waits, for up to a minute, until n lines have field i equal to
// one of values: Ctrl-C drops the events not yet printed, in bpftrace as
// in gtrace.
func (b *background) await(n, i int, values ...string) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b.mu.Lock()
		got := len(linesWithField(b.lines, i, values...))
		b.mu.Unlock()
		if got >= n {
			return
		}
	}
}

// gtraceTool starts `gtrace tools NAME ARGS`.
func gtraceTool(t *testing.T, ready string, args ...string) *background {
	return startTool(t, ready, harness.Bin(), append([]string{"tools"}, args...)...)
}

// libbpfTool starts one of libbpf-tools' tools, its output line
// buffered, or skips without them.
func libbpfTool(t *testing.T, ready, name string, args ...string) *background {
	t.Helper()
	path := libbpfToolPath(t, name)
	requireCommands(t, "stdbuf")
	return startTool(t, ready, "stdbuf", append([]string{"-oL", path}, args...)...)
}

// bpftraceTool starts one of Debian's bpftrace 0.17 tools.
func bpftraceTool(t *testing.T, ready, name string) *background {
	t.Helper()
	return startTool(t, ready, harness.RequireBpftrace(t), "-B", "line", toolPath(t, name))
}

// stop interrupts the tool as Ctrl-C does and returns the lines it
// printed after its header.
func (b *background) stop(t *testing.T) []string {
	t.Helper()
	b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.done:
		b.cmd.Wait()
		harness.CheckNoPanic(t, b.stderr.String())
		return b.lines
	case <-time.After(time.Minute):
		t.Fatalf("%s did not stop within a minute; stderr:\n%s", b.name, b.stderr.String())
	}
	return nil
}

// mapRow is a line of a map printed as bpftrace prints it.
var mapRow = regexp.MustCompile(`^@(\w+)\[(.*)\]: (\d+)$`)

// mapRows reads the rows of the map name: key to value.
func mapRows(lines []string, name string) map[string]int {
	rows := map[string]int{}
	for _, l := range lines {
		if m := mapRow.FindStringSubmatch(l); m != nil && m[1] == name {
			rows[m[2]], _ = strconv.Atoi(m[3])
		}
	}
	return rows
}

// tableRows reads the rows of a table of BCC's, "NAME COUNT ...", after
// its header line starting with header: the first field to the next.
func tableRows(lines []string, header string) map[string]int {
	rows := map[string]int{}
	in := false
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, header):
			in = true
		case in && len(f) >= 2:
			rows[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	return rows
}

// syscallProgram waits for a byte on stdin, then calls getppid 100
// times and fails to open a missing file 7 times, then exits: its
// system calls while traced are the read's return, those, and
// exit_group.
const syscallProgram = `
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
	char c;
	if (read(0, &c, 1) != 1) return 1;
	for (int i = 0; i < 100; i++) syscall(SYS_getppid);
	for (int i = 0; i < 7; i++) open("/nonexistent-gtrace-syscount", O_RDONLY);
	return 0;
}
`

// syscallWorkload runs the program until it waits on stdin, starts the
// tools with its pid, lets it run to its end and returns what each
// printed.
func syscallWorkload(t *testing.T, start func(pid int) []*background) [][]string {
	t.Helper()
	prog := exec.Command(harness.BuildC(t, "gtsyscalls", map[string]string{"sc.c": syscallProgram}))
	in, err := prog.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer prog.Wait()
	defer in.Close()
	tools := start(prog.Process.Pid)
	if _, err := in.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := prog.Wait(); err != nil {
		t.Fatalf("the syscall program: %v", err)
	}
	var out [][]string
	for _, b := range tools {
		out = append(out, b.stop(t))
	}
	return out
}

// TestBCCSyscount counts the system calls of a program by -p: exactly
// its 100 getppid() and 7 failed openat(), by name, and with -x or -e
// ENOENT only the failed ones.
func TestBCCSyscount(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		args []string
		want map[string]int
	}{
		{nil, map[string]int{"read": 1, "getppid": 100, "openat": 7}},
		{[]string{"-x"}, map[string]int{"openat": 7}},
		{[]string{"-e", strconv.Itoa(int(unix.ENOENT))}, map[string]int{"openat": 7}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{"syscount"}, tt.args...), " "), func(t *testing.T) {
			out := syscallWorkload(t, func(pid int) []*background {
				args := append([]string{"syscount", "-p", strconv.Itoa(pid)}, tt.args...)
				return []*background{gtraceTool(t, "Tracing syscalls", args...)}
			})
			if got := mapRows(out[0], "syscalls"); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v; output:\n%s", got, tt.want, strings.Join(out[0], "\n"))
			}
		})
	}
	t.Run("syscount -P -L", func(t *testing.T) {
		var pid int
		out := syscallWorkload(t, func(p int) []*background {
			pid = p
			return []*background{gtraceTool(t, "Tracing syscalls", "syscount", "-PL", "-p", strconv.Itoa(p))}
		})
		key := fmt.Sprintf("%d, gtsyscalls", pid)
		if got := mapRows(out[0], "processes"); len(got) != 1 || got[key] != 108 {
			t.Errorf("by process: got %v, want %s: 108; output:\n%s", got, key, strings.Join(out[0], "\n"))
		}
		if got := mapRows(out[0], "process_usecs"); len(got) != 1 {
			t.Errorf("time by process: got %v, want a row for %s; output:\n%s", got, key, strings.Join(out[0], "\n"))
		}
	})
}

// TestBCCSyscountDifferential counts the same program's calls under
// gtrace's syscount, libbpf-tools' and bpftrace 0.17's syscount.bt at
// once: the same counts per call with libbpf-tools (both count at the
// return), and the same total for the process with syscount.bt, which
// counts at entry: it sees exit_group where gtrace sees the read's
// return.
func TestBCCSyscountDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	for _, args := range [][]string{nil, {"-x"}} {
		t.Run(strings.Join(append([]string{"syscount"}, args...), " "), func(t *testing.T) {
			out := syscallWorkload(t, func(pid int) []*background {
				p := []string{"-p", strconv.Itoa(pid)}
				return []*background{
					gtraceTool(t, "Tracing syscalls", append(append([]string{"syscount"}, p...), args...)...),
					libbpfTool(t, "Tracing syscalls", "syscount", append(p, args...)...),
				}
			})
			got, want := mapRows(out[0], "syscalls"), tableRows(out[1], "SYSCALL")
			if len(got) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("gtrace %v, libbpf-tools %v\ngtrace:\n%s\nlibbpf-tools:\n%s", got, want,
					strings.Join(out[0], "\n"), strings.Join(out[1], "\n"))
			}
		})
	}
	t.Run("syscount.bt", func(t *testing.T) {
		var pid int
		out := syscallWorkload(t, func(p int) []*background {
			pid = p
			return []*background{
				gtraceTool(t, "Tracing syscalls", "syscount", "-P", "-p", strconv.Itoa(p)),
				bpftraceTool(t, "Counting syscalls", "syscount"),
			}
		})
		got := mapRows(out[0], "processes")[fmt.Sprintf("%d, gtsyscalls", pid)]
		want := mapRows(out[1], "process")["gtsyscalls"]
		if got != 108 || got != want {
			t.Errorf("gtrace %d calls, bpftrace %d, want 108\ngtrace:\n%s\nbpftrace:\n%s", got, want,
				strings.Join(out[0], "\n"), strings.Join(out[1], "\n"))
		}
	})
}

// execWorkload is a script that execs a child with arguments, a missing
// program, and last /bin/true in its own place; pids records the
// script's pid and its children's.
func execWorkload(t *testing.T, w *workload) string {
	return w.script(t, "exec.sh", `echo $$ > $DIR/pids
/bin/echo $DIR one two > /dev/null &
echo $! >> $DIR/pids
wait
$DIR/missing three 2> /dev/null &
echo $! >> $DIR/pids
wait
exec /bin/true $DIR
`)
}

// execLines are the lines of execsnoop for the workload: PCOMM PID PPID
// RET ARGS, the failed exec's only with failed; parent is the script's
// parent.
func execLines(w *workload, pids []int, parent int, failed bool) []string {
	line := func(comm string, pid, ppid, ret int, args string) string {
		return fmt.Sprintf("%-16s %-7d %-7d %3d %s", comm, pid, ppid, ret, args)
	}
	want := []string{
		line("sh", pids[0], parent, 0, "/bin/sh "+w.path("exec.sh")),
		line("echo", pids[1], pids[0], 0, "/bin/echo "+w.dir+" one two"),
	}
	if failed {
		want = append(want, line("sh", pids[2], pids[0], -int(unix.ENOENT), w.path("missing")+" three"))
	}
	return append(want, line("true", pids[0], parent, 0, "/bin/true "+w.dir))
}

// TestBCCExecsnoop runs the exec workload under execsnoop, as -c: its
// execs, exactly, with their parents and results; -n and -l filter them.
func TestBCCExecsnoop(t *testing.T) {
	testutils.RequireRoot(t)
	header := fmt.Sprintf("%-16s %-7s %-7s %3s %s", "PCOMM", "PID", "PPID", "RET", "ARGS")
	tests := []struct {
		args []string
		// keep picks the workload's lines the run prints.
		keep func(lines []string) []string
	}{
		{nil, func(l []string) []string { return append(l[:2:2], l[3]) }},
		{[]string{"-x"}, func(l []string) []string { return l }},
		{[]string{"-n", "ech"}, func(l []string) []string { return l[1:2] }},
		{[]string{"-x", "-l", "thr"}, func(l []string) []string { return l[2:3] }},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{"execsnoop"}, tt.args...), " "), func(t *testing.T) {
			w := newWorkload(t)
			cmd := exec.Command(harness.Bin(), append(append([]string{"tools", "execsnoop"}, tt.args...), "-c", execWorkload(t, w))...)
			r := harness.RunCmd(t, cmd, time.Minute)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			lines := strings.Split(r.Stdout, "\n")
			expectHeader(t, lines, header)
			pids := w.pids(t, "pids")
			got := linesWithField(lines, 1, itoas(pids)...)
			expectLines(t, "the workload's execs", got, tt.keep(execLines(w, pids, cmd.Process.Pid, true)))
		})
	}
}

// TestBCCExecsnoopDifferential runs gtrace's execsnoop -x, libbpf-tools'
// execsnoop -x and bpftrace 0.17's execsnoop.bt at once on the exec
// workload: the same lines with libbpf-tools, field by field, and the
// same pids and arguments as execsnoop.bt, which prints each call as it
// starts, failed or not.
func TestBCCExecsnoopDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	w := newWorkload(t)
	script := execWorkload(t, w)
	tools := []*background{
		gtraceTool(t, "PCOMM", "execsnoop", "-x"),
		libbpfTool(t, "PCOMM", "execsnoop", "-x"),
		bpftraceTool(t, "TIME(ms)", "execsnoop"),
	}
	run := exec.Command("/bin/sh", strings.Fields(script)[1:]...)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", script, err, out)
	}
	pids := w.pids(t, "pids")
	var out [][]string
	for _, b := range tools {
		b.await(4, 1, itoas(pids)...)
		out = append(out, b.stop(t))
	}
	want := execLines(w, pids, os.Getpid(), true)
	// libbpf-tools prints PCOMM 16 wide, PID and PPID 6 wide: the fields
	// are compared.
	for i, name := range []string{"gtrace", "libbpf-tools"} {
		var got []string
		for _, l := range linesWithField(out[i], 1, itoas(pids)...) {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
		var fields []string
		for _, l := range want {
			fields = append(fields, strings.Join(strings.Fields(l), " "))
		}
		expectLines(t, name+": the workload's execs", got, fields)
	}
	var got []string
	for _, l := range linesWithField(out[2], 1, itoas(pids)...) {
		got = append(got, strings.Join(strings.Fields(l)[1:], " "))
	}
	var fromGtrace []string
	for _, l := range linesWithField(out[0], 1, itoas(pids)...) {
		f := strings.Fields(l)
		fromGtrace = append(fromGtrace, strings.Join(append(f[1:2], f[4:]...), " "))
	}
	expectLines(t, "execsnoop.bt's pids and arguments, and gtrace's", got, fromGtrace)
}

// openWorkload: cat, under a name of its own, opens a file of the
// workload and fails on a missing one.
func openWorkload(t *testing.T, w *workload) string {
	if err := os.WriteFile(w.path("present"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.uniqueComm(t, "gtos", "/bin/cat")
	return w.script(t, "open.sh", fmt.Sprintf(`echo $$ > $DIR/pids
exec $DIR/%s $DIR/present $DIR/missing > /dev/null 2>&1
`, w.comm))
}

// openLines are opensnoop's lines for the workload: PID COMM FD ERR PATH.
func openLines(w *workload, pid int) []string {
	line := func(fd, errno int, path string) string {
		return fmt.Sprintf("%-7d %-16s %3d %3d %s", pid, w.comm, fd, errno, path)
	}
	// cat has fds 0-2 open, so its file is fd 3.
	return []string{line(3, 0, w.path("present")), line(-1, int(unix.ENOENT), w.path("missing"))}
}

// TestBCCOpensnoop runs the open workload under opensnoop: exactly its
// two opens, with fd and errno; -x the failed one; -n and -p keep the
// workload's lines only.
func TestBCCOpensnoop(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		args []string
		keep func(lines []string) []string
		only bool // the run prints the workload's lines alone
	}{
		{nil, func(l []string) []string { return l }, false},
		{[]string{"-x"}, func(l []string) []string { return l[1:] }, false},
		{[]string{"-n", "gtos"}, func(l []string) []string { return l }, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{"opensnoop"}, tt.args...), " "), func(t *testing.T) {
			w := newWorkload(t)
			script := openWorkload(t, w)
			r := harness.RunTimeout(t, time.Minute, harness.Bin(), append(append([]string{"tools", "opensnoop"}, tt.args...), "-c", script)...)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			lines := strings.Split(r.Stdout, "\n")
			expectHeader(t, lines, fmt.Sprintf("%-7s %-16s %3s %3s %s", "PID", "COMM", "FD", "ERR", "PATH"))
			pid := w.pids(t, "pids")[0]
			got := linesWithField(lines, 4, w.path("present"), w.path("missing"))
			expectLines(t, "the workload's opens", got, tt.keep(openLines(w, pid)))
			if tt.only {
				for _, l := range lines[1:] {
					if l != "" && !strings.HasPrefix(l, fmt.Sprintf("%-7d %-16s ", pid, w.comm)) {
						t.Errorf("a line not of the workload: %q", l)
					}
				}
			}
		})
	}
	t.Run("opensnoop -p", func(t *testing.T) {
		prog := exec.Command("/bin/sh", "-c", "read x; exec /bin/cat /nonexistent-gtrace-opensnoop 2> /dev/null")
		in, err := prog.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Start(); err != nil {
			t.Fatal(err)
		}
		b := gtraceTool(t, "PID", "opensnoop", "-p", strconv.Itoa(prog.Process.Pid))
		in.Write([]byte("go\n"))
		in.Close()
		prog.Wait()
		b.await(1, 4, "/nonexistent-gtrace-opensnoop")
		lines := b.stop(t)
		want := fmt.Sprintf("%-7d %-16s %3d %3d %s", prog.Process.Pid, "cat", -1, int(unix.ENOENT), "/nonexistent-gtrace-opensnoop")
		got := linesWithField(lines, 4, "/nonexistent-gtrace-opensnoop")
		expectLines(t, "the process's open", got, []string{want})
		for _, l := range lines {
			if l != "" && !strings.HasPrefix(l, strconv.Itoa(prog.Process.Pid)+" ") {
				t.Errorf("a line of another process: %q", l)
			}
		}
	})
}

// TestBCCOpensnoopDifferential runs gtrace's opensnoop, libbpf-tools'
// and bpftrace 0.17's opensnoop.bt at once on the open workload: the
// same fields for its two opens.
func TestBCCOpensnoopDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	w := newWorkload(t)
	script := openWorkload(t, w)
	tools := []*background{
		gtraceTool(t, "PID", "opensnoop"),
		libbpfTool(t, "PID", "opensnoop"),
		bpftraceTool(t, "PID", "opensnoop"),
	}
	// cat fails on the missing file: exit status 1.
	if out, err := exec.Command("/bin/sh", strings.Fields(script)[1:]...).CombinedOutput(); err != nil && !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("%s: %v: %s", script, err, out)
	}
	var want []string
	for _, l := range openLines(w, w.pids(t, "pids")[0]) {
		want = append(want, strings.Join(strings.Fields(l), " "))
	}
	for _, b := range tools {
		b.await(2, 4, w.path("present"), w.path("missing"))
		var got []string
		for _, l := range linesWithField(b.stop(t), 4, w.path("present"), w.path("missing")) {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
		expectLines(t, b.name+": the workload's opens", got, want)
	}
}

// histRecord is a histogram map of -j's output: key to buckets.
type histRecord struct {
	Type string
	Data map[string]json.RawMessage
}

// histBuckets reads the buckets of the histograms of map name in -j
// output, all keys together.
func histBuckets(t *testing.T, stdout, name string) []struct{ Min, Max, Count int } {
	t.Helper()
	var all []struct{ Min, Max, Count int }
	for _, line := range strings.Split(stdout, "\n") {
		var rec histRecord
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "hist" || rec.Data["@"+name] == nil {
			continue
		}
		var buckets []struct{ Min, Max, Count int }
		if json.Unmarshal(rec.Data["@"+name], &buckets) == nil {
			all = append(all, buckets...)
			continue
		}
		var keyed map[string][]struct{ Min, Max, Count int }
		if err := json.Unmarshal(rec.Data["@"+name], &keyed); err != nil {
			t.Fatalf("@%s in %s: %v", name, line, err)
		}
		for _, b := range keyed {
			all = append(all, b...)
		}
	}
	return all
}

// TestBCCRunqlat keeps two busy loops per CPU for two seconds: each
// waits for the CPU while the other runs, so the histogram has waits of
// a millisecond and more; with -P, a histogram per process.
func TestBCCRunqlat(t *testing.T) {
	testutils.RequireRoot(t)
	requireCommands(t, "taskset", "timeout")
	for _, args := range [][]string{nil, {"-P"}} {
		name := "usecs"
		if len(args) > 0 {
			name = "usecs_by_pid"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorkload(t)
			script := w.script(t, "busy.sh", busyLoops(t, 2, "2")+"wait\n")
			r := harness.RunTimeout(t, time.Minute, harness.Bin(), append(append([]string{"tools", "runqlat", "-j"}, args...), "-c", script)...)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			long := 0
			for _, b := range histBuckets(t, r.Stdout, name) {
				if b.Min >= 1000 {
					long += b.Count
				}
			}
			if long == 0 {
				t.Errorf("no wait of 1 ms or more in @%s:\n%s", name, r.Stdout)
			}
		})
	}
}

// TestBCCRunqlatDifferential runs gtrace's runqlat -m and libbpf-tools'
// at once, with the busy loops: both see waits of a millisecond and
// more. The counts depend on timing, and bpftrace 0.17's runqlat.bt
// includes a kernel header its clang cannot parse here.
func TestBCCRunqlatDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	requireCommands(t, "taskset", "timeout")
	tools := []*background{
		gtraceTool(t, "Tracing run queue", "runqlat", "-m"),
		libbpfTool(t, "Tracing run queue", "runqlat", "-m"),
	}
	w := newWorkload(t)
	script := w.script(t, "busy.sh", busyLoops(t, 2, "2")+"wait\n")
	if out, err := exec.Command("/bin/sh", strings.Fields(script)[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", script, err, out)
	}
	// A row of 1 ms or more: bpftrace's "[1]", "[2, 4)", ... and
	// libbpf-tools' "1 -> 1 : N", "2 -> 3 : N", ...
	rows := []*regexp.Regexp{
		regexp.MustCompile(`^\[([1-9]\d*)(, \d+[KM]?\))?\]? +(\d+) \|`),
		regexp.MustCompile(`^ *([1-9]\d*) -> \d+ +: (\d+) `),
	}
	for i, b := range tools {
		long := 0
		for _, l := range b.stop(t) {
			if m := rows[i].FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[len(m)-1])
				long += n
			}
		}
		if long == 0 {
			t.Errorf("%s: no wait of 1 ms or more", b.name)
		}
	}
}

// loopbackTraffic listens on two ports of 127.0.0.1, connects to the
// first twice and to the second once, sends 10 KiB on each connection
// and receives 20 KiB back, and closes the client's end first. It
// returns the ports of the two listeners and of the connections' client
// ends.
func loopbackTraffic(t *testing.T) (listen [2]int, clients []int) {
	t.Helper()
	var ls [2]net.Listener
	for i := range ls {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ls[i], listen[i] = l, l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range []net.Listener{ls[0], ls[0], ls[1]} {
		c, err := net.Dial("tcp4", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c.LocalAddr().(*net.TCPAddr).Port)
		if _, err := c.Write(make([]byte, 10<<10)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(s, make([]byte, 10<<10)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(make([]byte, 20<<10)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 20<<10)); err != nil {
			t.Fatal(err)
		}
		c.Close()
		// The server's end reads the client's FIN, then closes.
		if n, err := s.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("the server's end read %d bytes, %v: want EOF", n, err)
		}
		s.Close()
	}
	return listen, clients
}

// testComm is the name this test process's threads have.
func testComm(t *testing.T) string {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(comm))
}

// TestBCCTcpconnect makes three connections on loopback: tcpconnect
// prints exactly those, with this process as the connecting one, and
// --port those to one port.
func TestBCCTcpconnect(t *testing.T) {
	testutils.RequireRoot(t)
	for _, port := range []bool{false, true} {
		t.Run(fmt.Sprintf("port %v", port), func(t *testing.T) {
			// The ports are known once the listeners are: --port takes a
			// port reserved before.
			reserved, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"tcpconnect", "-p", strconv.Itoa(os.Getpid())}
			if port {
				args = append(args, "--port="+strconv.Itoa(reserved.Addr().(*net.TCPAddr).Port))
			}
			b := gtraceTool(t, "PID", args...)
			listen, _ := loopbackTraffic(t)
			if port {
				// Connect to the reserved listener too.
				c, err := net.Dial("tcp4", reserved.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			reserved.Close()
			line := func(p int) string {
				return fmt.Sprintf("%-7d %-16s %-2d %-16s %-16s %-5d", os.Getpid(), testComm(t), 4, "127.0.0.1", "127.0.0.1", p)
			}
			ports := []int{listen[0], listen[0], listen[1]}
			if port {
				ports = []int{reserved.Addr().(*net.TCPAddr).Port}
			}
			var want []string
			for _, p := range ports {
				want = append(want, line(p))
			}
			b.await(len(want), 5, itoas(ports)...)
			lines := b.stop(t)
			var got []string
			for _, l := range lines {
				if strings.TrimSpace(l) != "" {
					got = append(got, strings.TrimRight(l, " "))
				}
			}
			for i := range want {
				want[i] = strings.TrimRight(want[i], " ")
			}
			expectLines(t, "the connections", got, want)
		})
	}
}

// TestBCCTcpconnectDifferential runs gtrace's tcpconnect and
// libbpf-tools' at once on the loopback traffic: the same fields.
// libbpf-tools' attaches a kprobe to tcp_v4_connect, and bpftrace 0.17's
// tcpconnect.bt one to tcp_connect.
func TestBCCTcpconnectDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	if _, err := os.Stat("/sys/kernel/tracing/kprobe_events"); err != nil {
		testutils.SkipUnsupported(t, "libbpf-tools' tcpconnect attaches a kprobe to tcp_v4_connect, and this kernel has no kprobes: "+err.Error())
	}
	pid := []string{"-p", strconv.Itoa(os.Getpid())}
	tools := []*background{
		gtraceTool(t, "PID", append([]string{"tcpconnect"}, pid...)...),
		libbpfTool(t, "PID", "tcpconnect", pid...),
	}
	listen, _ := loopbackTraffic(t)
	ports := itoas([]int{listen[0], listen[0], listen[1]})
	var want []string
	for _, p := range ports {
		want = append(want, fmt.Sprintf("%d %s 4 127.0.0.1 127.0.0.1 %s", os.Getpid(), testComm(t), p))
	}
	for _, b := range tools {
		b.await(3, 5, ports...)
		var got []string
		for _, l := range linesWithField(b.stop(t), 5, ports...) {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
		expectLines(t, b.name+": the connections", got, want)
	}
}

// tcplifeLines are tcplife's lines for the loopback traffic: each
// connection's client end, which sent 10 KiB and received 20, and its
// server end, both closed by this process.
func tcplifeLines(t *testing.T, listen [2]int, clients []int) []string {
	var want []string
	for i, server := range []int{listen[0], listen[0], listen[1]} {
		line := func(lport, rport, tx, rx int) string {
			return fmt.Sprintf("%d %s 127.0.0.1 %d 127.0.0.1 %d %d %d", os.Getpid(), testComm(t), lport, rport, tx, rx)
		}
		want = append(want, line(clients[i], server, 10, 20), line(server, clients[i], 20, 10))
	}
	return want
}

// tcplifeFields are the fields of tcplife's lines for the ports, without
// the lifespan, which depends on timing. TX_KB and RX_KB are whole KiB:
// libbpf-tools prints them with two decimals.
func tcplifeFields(lines []string, ports []int) []string {
	var out []string
	for _, l := range linesWithField(lines, 3, itoas(ports)...) {
		f := strings.Fields(l)
		if len(f) != 9 {
			out = append(out, l)
			continue
		}
		for _, i := range []int{6, 7} {
			kb, _ := strconv.ParseFloat(f[i], 64)
			f[i] = strconv.Itoa(int(kb))
		}
		out = append(out, strings.Join(f[:8], " "))
	}
	return out
}

// TestBCCTcplife makes three connections on loopback: tcplife prints
// exactly their six ends, with the bytes each sent and received.
func TestBCCTcplife(t *testing.T) {
	testutils.RequireRoot(t)
	b := gtraceTool(t, "PID", "tcplife", "-p", strconv.Itoa(os.Getpid()))
	listen, clients := loopbackTraffic(t)
	ports := append(clients, listen[:]...)
	b.await(6, 3, itoas(ports)...)
	lines := b.stop(t)
	expectLines(t, "the connections' ends", tcplifeFields(lines, ports), tcplifeLines(t, listen, clients))
	for _, l := range linesWithField(lines, 3, itoas(ports)...) {
		f := strings.Fields(l)
		if _, err := strconv.ParseFloat(f[len(f)-1], 64); err != nil {
			t.Errorf("MS of %q is not a number", l)
		}
	}
}

// TestBCCTcplifeDifferential runs gtrace's tcplife and libbpf-tools' at
// once on the loopback traffic: the same fields but the lifespan.
// bpftrace 0.17's tcplife.bt attaches a kprobe, which this kernel lacks.
func TestBCCTcplifeDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	tools := []*background{
		gtraceTool(t, "PID", "tcplife"),
		libbpfTool(t, "PID", "tcplife"),
	}
	listen, clients := loopbackTraffic(t)
	ports := append(clients, listen[:]...)
	want := tcplifeLines(t, listen, clients)
	for _, b := range tools {
		b.await(6, 3, itoas(ports)...)
		expectLines(t, b.name+": the connections' ends", tcplifeFields(b.stop(t), ports), want)
	}
}

// irqCounts runs tool -C around the workload script and returns its
// counts per name.
func irqCounts(t *testing.T, tool, script string) map[string]int {
	t.Helper()
	r := harness.RunTimeout(t, time.Minute, harness.Bin(), "tools", tool, "-C", "-c", script)
	if r.Code != 0 {
		t.Fatalf("%s: exit code %d, stderr:\n%s", tool, r.Code, r.Stderr)
	}
	return mapRows(strings.Split(r.Stdout, "\n"), "count")
}

// procInterrupts reads /proc/interrupts: each handler's name to its
// count on all CPUs.
func procInterrupts(t *testing.T) map[string]int {
	t.Helper()
	data, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	cpus := len(strings.Fields(lines[0]))
	counts := map[string]int{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		// "IRQ: COUNT... CHIP HWIRQ-TYPE NAME": numbered lines only.
		if len(f) < cpus+3 || !regexp.MustCompile(`^\d+:$`).MatchString(f[0]) {
			continue
		}
		for _, c := range f[1 : cpus+1] {
			n, _ := strconv.Atoi(c)
			counts[f[len(f)-1]] += n
		}
	}
	return counts
}

// TestBCCHardirqs counts hard interrupts around direct writes to the
// disk of /var/tmp: on this machine's virtio disk, the handler
// virtio1-req.0 (the name depends on the machine) runs for them. Each
// handler hardirqs counts is one /proc/interrupts lists, no more often
// than its count there rose.
func TestBCCHardirqs(t *testing.T) {
	testutils.RequireRoot(t)
	dir, err := os.MkdirTemp("/var/tmp", "hardirqs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	w := newWorkload(t)
	script := w.script(t, "dd.sh", "/usr/bin/dd if=/dev/zero of="+filepath.Join(dir, "f")+" bs=4k count=64 oflag=direct status=none\n")
	before := procInterrupts(t)
	counts := irqCounts(t, "hardirqs", script)
	after := procInterrupts(t)
	if len(counts) == 0 {
		t.Fatal("no hard interrupts counted")
	}
	for name, n := range counts {
		if _, ok := after[name]; !ok {
			t.Errorf("%s: not a handler of /proc/interrupts %v", name, after)
		}
		if n > after[name]-before[name] {
			t.Errorf("%s: %d runs, but /proc/interrupts rose by %d", name, n, after[name]-before[name])
		}
	}
	t.Logf("hard interrupts during the writes: %v", counts)
}

// TestBCCSoftirqs counts soft interrupts around traffic on loopback:
// the timer's, which always run, and net_rx, which delivers the
// loopback packets.
func TestBCCSoftirqs(t *testing.T) {
	testutils.RequireRoot(t)
	b := gtraceTool(t, "Tracing soft irq", "softirqs", "-C")
	loopbackTraffic(t)
	time.Sleep(100 * time.Millisecond) // a timer tick or more
	counts := mapRows(b.stop(t), "count")
	for _, v := range []string{"timer", "net_rx"} {
		if counts[v] == 0 {
			t.Errorf("no %s soft interrupts in %v", v, counts)
		}
	}
}

// TestBCCIrqsDifferential runs gtrace's softirqs and hardirqs and
// libbpf-tools' at once: the same vectors and handlers run, each timed.
// Their times differ with the tracers' own cost.
func TestBCCIrqsDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	for _, tool := range []struct{ name, ready string }{{"softirqs", "Tracing soft irq"}, {"hardirqs", "Tracing hard irq"}} {
		t.Run(tool.name, func(t *testing.T) {
			tools := []*background{gtraceTool(t, tool.ready, tool.name), libbpfTool(t, tool.ready, tool.name)}
			loopbackTraffic(t)
			time.Sleep(time.Second)
			// gtrace's run starts before libbpf-tools' and ends after it.
			want := tableRows(tools[1].stop(t), strings.ToUpper(strings.TrimSuffix(tool.name, "s")))
			got := mapRows(tools[0].stop(t), "total_usecs")
			for name := range want {
				if _, ok := got[name]; !ok {
					t.Errorf("libbpf-tools timed %s, gtrace did not: gtrace %v, libbpf-tools %v", name, got, want)
				}
			}
			if len(want) == 0 && tool.name == "softirqs" {
				t.Errorf("libbpf-tools timed no soft interrupt")
			}
		})
	}
}

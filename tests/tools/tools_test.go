package tools

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
	gttools "gtrace/tools"
)

// toolDir holds the tools of Debian's bpftrace 0.17 package.
const toolDir = "/usr/sbin"

// debianTools are the 38 tools of Debian's bpftrace 0.17.
var debianTools = []string{
	"bashreadline", "biolatency", "biosnoop", "biostacks", "bitesize",
	"capable", "cpuwalk", "dcsnoop", "execsnoop", "gethostlatency",
	"killsnoop", "loads", "mdflush", "naptime", "oomkill", "opensnoop",
	"pidpersec", "runqlat", "runqlen", "setuids", "ssllatency", "sslsnoop",
	"statsnoop", "swapin", "syncsnoop", "syscount", "tcpaccept",
	"tcpconnect", "tcpdrop", "tcplife", "tcpretrans", "tcpsynbl",
	"threadsnoop", "undump", "vfscount", "vfsstat", "writeback", "xfsdist",
}

// toolPath is the path of a Debian tool, which the bpftrace package
// installs.
func toolPath(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(toolDir, name+".bt")
	if _, err := os.Stat(path); err != nil {
		testutils.Skip(t, fmt.Sprintf("Debian's bpftrace tools are not installed: %v", err))
	}
	return path
}

// TestToolsDryRun compiles every Debian tool and loads it through the
// verifier. Some cannot compile where the system lacks what they name,
// and the error must then name it: loads.bt reads the data symbol
// avenrun, which /proc/kallsyms lists only with CONFIG_KALLSYMS_ALL;
// runqlen.bt declares struct cfs_rq with nr_running, a field Linux 6.13
// renamed; ssllatency.bt and sslsnoop.bt probe OpenSSL internals that a
// stripped libcrypto does not define.
func TestToolsDryRun(t *testing.T) {
	testutils.RequireRoot(t)
	installed, err := filepath.Glob(filepath.Join(toolDir, "*.bt"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range installed {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".bt"))
	}
	if strings.Join(names, " ") != strings.Join(debianTools, " ") {
		t.Errorf("%s/*.bt holds %d tools:\n%v\nwant the %d of Debian's bpftrace 0.17:\n%v",
			toolDir, len(names), names, len(debianTools), debianTools)
	}

	// What the system lacks, and so what the tools' errors must name.
	wantErr := map[string]string{}
	if !kernelHasSymbol(t, "avenrun") {
		wantErr["loads"] = "Failed to resolve kernel symbol: avenrun"
	}
	if !kernelStructHasField(t, "cfs_rq", "nr_running") {
		wantErr["runqlen"] = "'nr_running'"
	}
	if !libraryHasFunction(t, "libcrypto.so*", "rsa_ossl_public_encrypt") {
		wantErr["ssllatency"] = "rsa_ossl_public_encrypt"
		wantErr["sslsnoop"] = "rsa_ossl_public_encrypt"
	}
	t.Logf("tools that cannot compile here, and what their errors name: %v", wantErr)

	for _, name := range debianTools {
		t.Run(name, func(t *testing.T) {
			path := toolPath(t, name)
			r := harness.Gtrace(t, "--dry-run", path)
			want, fails := wantErr[name]
			if !fails {
				if r.Code != 0 {
					t.Errorf("exit code %d, want 0; stderr:\n%s", r.Code, r.Stderr)
				}
				return
			}
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", r.Code, r.Stderr)
			}
			// A diagnostic at the tool's line: "FILE:LINE:COL-COL: ERROR: ...".
			diag := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(path) + `:\d+:\d+(-\d+)?: ERROR: .*` + regexp.QuoteMeta(want))
			if !diag.MatchString(r.Stderr) {
				t.Errorf("stderr has no error naming %s at a line of %s:\n%s", want, path, r.Stderr)
			}
		})
	}
}

// libraryHasFunction tells whether a library matching the file pattern lib, in
// the system's library directories, has a function symbol called name.
func libraryHasFunction(t *testing.T, lib, name string) bool {
	t.Helper()
	var paths []string
	for _, dir := range []string{"/lib/*", "/usr/lib/*", "/lib", "/usr/lib"} {
		found, _ := filepath.Glob(filepath.Join(dir, lib))
		paths = append(paths, found...)
	}
	if len(paths) == 0 {
		t.Fatalf("no %s in the library directories", lib)
	}
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols() // a stripped library has no .symtab
		dyn, _ := f.DynamicSymbols()
		f.Close()
		for _, s := range append(syms, dyn...) {
			if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
				return true
			}
		}
	}
	return false
}

// kernelHasSymbol tells whether /proc/kallsyms lists name.
func kernelHasSymbol(t *testing.T, name string) bool {
	t.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "ADDRESS TYPE NAME [MODULE]"
		if fields := strings.Fields(s.Text()); len(fields) >= 3 && fields[2] == name {
			return true
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}

// kernelStructHasField tells whether the kernel's BTF gives struct name a
// member called field.
func kernelStructHasField(t *testing.T, name, field string) bool {
	t.Helper()
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatalf("kernel BTF: %v", err)
	}
	var s *btf.Struct
	if err := spec.TypeByName(name, &s); err != nil {
		t.Fatalf("struct %s in kernel BTF: %v", name, err)
	}
	for _, m := range s.Members {
		if m.Name == field {
			return true
		}
	}
	return false
}

// workload is one workload's directory: its scripts, the files it touches
// and the pids it records. The path is short so that file names fit in
// bpftrace 0.17's 64-byte strings, which the differential test needs.
type workload struct {
	dir  string
	comm string // a command name unique to this test process, if needed
	dev  string // a loop device, if needed
}

func newWorkload(t *testing.T) *workload {
	t.Helper()
	dir, err := os.MkdirTemp("", "gt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return &workload{dir: dir}
}

func (w *workload) path(name string) string { return filepath.Join(w.dir, name) }

// script writes a shell script in which $DIR is the workload's
// directory, and returns the command that runs it. bpftrace 0.17's -c
// runs ELF files only, so the command is /bin/sh with the script.
func (w *workload) script(t *testing.T, name, body string) string {
	t.Helper()
	if err := os.WriteFile(w.path(name), []byte("DIR="+w.dir+"\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return "/bin/sh " + w.path(name)
}

// pids reads the pids the workload wrote to file, one a line.
func (w *workload) pids(t *testing.T, file string) []int {
	t.Helper()
	data, err := os.ReadFile(w.path(file))
	if err != nil {
		t.Fatalf("the workload's pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the workload's pids: %v", err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// uniqueComm copies the executable at src into the workload's directory
// under a name no other process has (comm keeps 15 bytes), so the tool's
// lines for it are the workload's alone.
func (w *workload) uniqueComm(t *testing.T, prefix, src string) {
	t.Helper()
	w.comm = fmt.Sprintf("%s%d", prefix, os.Getpid())
	if len(w.comm) > 15 {
		w.comm = w.comm[:15]
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(w.path(w.comm), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// loopDevice attaches a loop device to a 16 MiB file of the workload: a
// block device that only the workload uses, whichever file system holds
// the temporary directory.
func (w *workload) loopDevice(t *testing.T) {
	t.Helper()
	requireCommands(t, "losetup")
	disk := w.path("disk")
	if err := os.WriteFile(disk, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, 16<<20); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", disk).CombinedOutput()
	if err != nil {
		testutils.Skip(t, fmt.Sprintf("no loop device for block I/O: losetup: %v: %s", err, out))
	}
	w.dev = strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", w.dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", w.dev, err, out)
		}
	})
}

// devNumber is "MAJOR:MINOR" of a block device, as the kernel names its
// backing device info.
func devNumber(t *testing.T, dev string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
}

// requireCommands skips, or fails under CI, without the named programs.
func requireCommands(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			testutils.Skip(t, fmt.Sprintf("workload needs %s: %v", n, err))
		}
	}
}

// sysno is the number of a system call that a perl workload makes
// directly: glibc's wrappers use other calls (clock_nanosleep) or
// broadcast to every thread.
func sysno(t *testing.T, name string) int {
	t.Helper()
	table := map[string]map[string]int{
		"amd64": {"nanosleep": 35, "setuid": 105, "setresuid": 117, "setfsuid": 122},
		"arm64": {"nanosleep": 101, "setuid": 146, "setresuid": 147, "setfsuid": 151},
	}
	n, ok := table[runtime.GOARCH][name]
	if !ok {
		testutils.Skip(t, fmt.Sprintf("no syscall number for %s on %s", name, runtime.GOARCH))
	}
	return n
}

// allowedCPUs lists the CPUs this process may run on.
func allowedCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var list []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			list = append(list, i)
		}
	}
	return list
}

// busyLoops is shell that keeps n loops busy on each CPU for secs seconds.
func busyLoops(t *testing.T, n int, secs string) string {
	var b strings.Builder
	for _, c := range allowedCPUs(t) {
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "/usr/bin/taskset -c %d /usr/bin/timeout %s /bin/sh -c 'while :; do :; done' &\n", c, secs)
		}
	}
	return b.String()
}

// outLines is a tracer's stdout as lines, without the attaching line.
func outLines(stdout string) []string {
	return strings.Split(harness.StripAttaching(stdout), "\n")
}

// clockTime is time("%H:%M:%S") at the start of a line.
var clockTime = regexp.MustCompile(`^\d\d:\d\d:\d\d`)

// maskTime replaces the time at the start of each line with "HH:MM:SS",
// so that expectations can be whole lines.
func maskTime(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, clockTime.ReplaceAllString(l, "HH:MM:SS"))
	}
	return out
}

// linesWithField returns the lines whose whitespace-separated field i is one of
// values.
func linesWithField(lines []string, i int, values ...string) []string {
	var out []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) <= i {
			continue
		}
		for _, v := range values {
			if f[i] == v {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// itoas formats integers for linesWithField.
func itoas(ns []int) []string {
	var s []string
	for _, n := range ns {
		s = append(s, strconv.Itoa(n))
	}
	return s
}

// maskPids replaces each pid of the workload, and the padding after it,
// with "<pidN> ": pids differ between the runs the differential test
// compares.
func maskPids(lines []string, pids []int) []string {
	out := append([]string(nil), lines...)
	for i, pid := range pids {
		re := regexp.MustCompile(`\b` + strconv.Itoa(pid) + `\b *`)
		for j := range out {
			out[j] = re.ReplaceAllString(out[j], fmt.Sprintf("<pid%d> ", i))
		}
	}
	return out
}

// expectLines compares lines with the workload's expectation.
func expectLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// expectHeader checks the lines the tool's BEGIN prints, and returns them.
func expectHeader(t *testing.T, lines []string, want ...string) []string {
	t.Helper()
	if len(lines) < len(want) {
		t.Errorf("want header %q, got only %q", want, lines)
		return want
	}
	expectLines(t, "header", lines[:len(want)], want)
	return want
}

// toolRun is one tracer's run of a tool.
type toolRun struct {
	harness.Result
	tracer string // "gtrace" or "bpftrace"
}

// toolCase is a Debian tool, its workload and what the workload makes
// it print.
type toolCase struct {
	tool string
	// setup writes the workload into w and returns the -c command.
	setup func(t *testing.T, w *workload) string
	// check verifies a run's output against the workload, field by field,
	// and returns the lines the differential test compares: the tool's
	// header and the workload's lines, with only what differs between
	// runs (times, pids) masked.
	check func(t *testing.T, w *workload, r toolRun) []string
	// compare: bpftrace 0.17 runs the tool here, and the workload's lines
	// do not depend on timing, so the differential test compares them.
	compare bool
}

// runTool runs tool under a tracer with the workload as its -c command.
func runTool(t *testing.T, tracer, tool, cmd string) toolRun {
	t.Helper()
	bin := harness.Bin()
	if tracer != "gtrace" {
		bin = tracer
	}
	r := toolRun{harness.Run(t, bin, "-c", cmd, toolPath(t, tool)), filepath.Base(tracer)}
	if r.Code != 0 {
		t.Fatalf("%s %s: exit code %d, stderr:\n%s", r.tracer, tool, r.Code, r.Stderr)
	}
	return r
}

var toolCases = []toolCase{
	{"bitesize", setupBitesize, checkBitesize, true},
	{"execsnoop", setupExecsnoop, checkExecsnoop, true},
	{"killsnoop", setupKillsnoop, checkKillsnoop, true},
	{"naptime", setupNaptime, checkNaptime, true},
	{"opensnoop", setupOpensnoop, checkOpensnoop, true},
	{"setuids", setupSetuids, checkSetuids, true},
	{"statsnoop", setupStatsnoop, checkStatsnoop, true},
	{"syncsnoop", setupSyncsnoop, checkSyncsnoop, true},
	{"syscount", setupSyscount, checkSyscount, true},
	// Counts and writebacks of the whole system, and samples.
	{"pidpersec", setupPidpersec, checkPidpersec, false},
	{"writeback", setupWriteback, checkWriteback, false},
	{"cpuwalk", setupCpuwalk, checkCpuwalk, false},
	// runqlat and tcpdrop include kernel headers that bpftrace 0.17's
	// clang cannot parse here ("unknown type name '__aligned_u64'",
	// "'net/sock.h' file not found"); gtrace takes their types from BTF.
	{"runqlat", setupRunqlat, checkRunqlat, false},
	{"tcpdrop", setupTcpdrop, checkTcpdrop, false},
}

// TestToolsRun runs Debian's tools unmodified, each on a workload whose
// lines it must print as the workload fixes them.
func TestToolsRun(t *testing.T) {
	testutils.RequireRoot(t)
	for _, tc := range toolCases {
		t.Run(tc.tool, func(t *testing.T) {
			w := newWorkload(t)
			cmd := tc.setup(t, w)
			tc.check(t, w, runTool(t, "gtrace", tc.tool, cmd))
		})
	}
}

// TestToolsDifferential runs the tools whose lines for a workload do not
// depend on timing under bpftrace 0.17 and gtrace, on the same workload,
// and compares those lines.
func TestToolsDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	for _, tc := range toolCases {
		if !tc.compare {
			continue
		}
		t.Run(tc.tool, func(t *testing.T) {
			w := newWorkload(t)
			cmd := tc.setup(t, w)
			ref := runTool(t, bpftrace, tc.tool, cmd)
			ref.Stdout = harness.Normalise(ref.Stdout, nil)
			want := tc.check(t, w, ref)
			got := tc.check(t, w, runTool(t, "gtrace", tc.tool, cmd))
			if n, wl, gl := harness.FirstDifference(want, got); n != 0 {
				t.Errorf("line %d: bpftrace %q, gtrace %q\nbpftrace:\n%s\ngtrace:\n%s",
					n, wl, gl, strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}

// bitesize: direct writes of 4 KiB and 16 KiB to a loop device, by a
// command of a unique name. Direct I/O on a block device that nothing
// else uses issues one request per write, from the writer.
func setupBitesize(t *testing.T, w *workload) string {
	w.loopDevice(t)
	w.uniqueComm(t, "gtbs", "/usr/bin/dd")
	return w.script(t, "bite.sh", fmt.Sprintf(
		"$DIR/%[1]s if=/dev/zero of=%[2]s bs=4096 count=8 oflag=direct status=none\n"+
			"$DIR/%[1]s if=/dev/zero of=%[2]s bs=16384 count=3 oflag=direct status=none\n",
		w.comm, w.dev))
}

func checkBitesize(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing block device I/O... Hit Ctrl-C to end.")
	const end = "I/O size (bytes) histograms by process name:"
	found := false
	for _, l := range lines {
		found = found || l == end
	}
	if !found {
		t.Errorf("%s: no line %q from END:\n%s", r.tracer, end, r.Stdout)
	}
	cmp = append(cmp, end)
	want := []string{"@[" + w.comm + "]:"}
	for _, row := range []string{harness.HistRow("[4K, 8K)", 8, 8), harness.HistRow("[8K, 16K)", 0, 8), harness.HistRow("[16K, 32K)", 3, 8)} {
		want = append(want, strings.TrimSuffix(row, "\n"))
	}
	got := mapBlock(lines, want[0])
	expectLines(t, r.tracer+": the workload's histogram", got, want)
	return append(cmp, got...)
}

// mapBlock returns the lines from header up to the next empty line.
func mapBlock(lines []string, header string) []string {
	for i, l := range lines {
		if l != header {
			continue
		}
		end := i + 1
		for end < len(lines) && lines[end] != "" {
			end++
		}
		return lines[i:end]
	}
	return nil
}

// execsnoop: the -c script's own exec, a child's exec and the script's
// final exec, each with arguments naming the workload's directory.
func setupExecsnoop(t *testing.T, w *workload) string {
	return w.script(t, "exec.sh", `echo $$ > $DIR/pids
/bin/echo $DIR one two > /dev/null &
echo $! >> $DIR/pids
wait
exec /bin/true $DIR
`)
}

// execTime is execsnoop's "%-10u " time column.
var execTime = regexp.MustCompile(`^\d+ +`)

func checkExecsnoop(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, fmt.Sprintf("%-10s %-5s %s", "TIME(ms)", "PID", "ARGS"))
	pids := w.pids(t, "pids") // the script, then its child
	var got []string
	for _, l := range linesWithField(lines, 1, itoas(pids)...) {
		// The time is milliseconds since the tracer started: at most
		// the run's length, printed 10 wide.
		m := execTime.FindString(l)
		ms, _ := strconv.Atoi(strings.TrimSpace(m))
		if len(m) != 11 || int64(ms) > r.Elapsed.Milliseconds() {
			t.Errorf("%s: time column of %q is not 10 wide or beyond the run's %v", r.tracer, l, r.Elapsed)
		}
		got = append(got, execTime.ReplaceAllString(l, fmt.Sprintf("%-10s ", "MS")))
	}
	line := func(pid int, args string) string { return fmt.Sprintf("%-10s %-5d %s", "MS", pid, args) }
	want := []string{
		line(pids[0], "/bin/sh "+w.path("exec.sh")),
		line(pids[1], "/bin/echo "+w.dir+" one two"),
		line(pids[0], "/bin/true "+w.dir),
	}
	expectLines(t, r.tracer+": the workload's execs", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// killsnoop: the script kills a sleep it started, then signals it again
// once it is gone (ESRCH).
func setupKillsnoop(t *testing.T, w *workload) string {
	return w.script(t, "kill.sh", `echo $$ > $DIR/pids
/bin/sleep 30 &
echo $! >> $DIR/pids
kill -TERM $!
wait $!
kill -0 $! 2> /dev/null
exit 0
`)
}

func checkKillsnoop(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing kill() signals... Hit Ctrl-C to end.",
		fmt.Sprintf("%-9s %-6s %-16s %-4s %-6s %s", "TIME", "PID", "COMM", "SIG", "TPID", "RESULT"))
	pids := w.pids(t, "pids") // the script, the sleep
	got := maskTime(linesWithField(lines, 1, strconv.Itoa(pids[0])))
	line := func(sig, ret int) string {
		return fmt.Sprintf("HH:MM:SS  %-6d %-16s %-4d %-6d %d", pids[0], "sh", sig, pids[1], ret)
	}
	want := []string{line(15, 0), line(0, -int(unix.ESRCH))}
	expectLines(t, r.tracer+": the workload's kills", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// naptime: perl, a child of the script, calls nanosleep for 1.005s.
func setupNaptime(t *testing.T, w *workload) string {
	requireCommands(t, "perl")
	return w.script(t, "nap.sh", fmt.Sprintf(`echo $$ > $DIR/pids
/usr/bin/perl -e '
open(my $f, ">>", "$ARGV[0]/pids") or die; print $f "$$\n"; close $f;
my $ts = pack("q2", 1, 5000000);
syscall(%d, $ts, 0) == 0 or die "nanosleep: $!";
' $DIR
`, sysno(t, "nanosleep")))
}

func checkNaptime(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing sleeps. Hit Ctrl-C to end.",
		fmt.Sprintf("%-8s %-6s %-16s %-6s %-16s %s", "TIME", "PPID", "PCOMM", "PID", "COMM", "SECONDS"))
	pids := w.pids(t, "pids") // the script, perl
	got := maskTime(linesWithField(lines, 3, strconv.Itoa(pids[1])))
	want := []string{fmt.Sprintf("HH:MM:SS %-6d %-16s %-6d %-16s %d.%03d", pids[0], "sh", pids[1], "perl", 1, 5)}
	expectLines(t, r.tracer+": the workload's sleep", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// opensnoop: cat opens a file of the workload and fails on a missing one.
func setupOpensnoop(t *testing.T, w *workload) string {
	if err := os.WriteFile(w.path("present"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w.script(t, "open.sh", `echo $$ > $DIR/pids
exec /bin/cat $DIR/present $DIR/missing > /dev/null 2>&1
`)
}

func checkOpensnoop(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing open syscalls... Hit Ctrl-C to end.",
		fmt.Sprintf("%-6s %-16s %4s %3s %s", "PID", "COMM", "FD", "ERR", "PATH"))
	pids := w.pids(t, "pids")
	got := linesWithField(lines, 4, w.path("present"), w.path("missing"))
	line := func(fd, errno int, path string) string {
		return fmt.Sprintf("%-6d %-16s %4d %3d %s", pids[0], "cat", fd, errno, path)
	}
	// cat has fds 0-2 open, so its file is fd 3.
	want := []string{line(3, 0, w.path("present")), line(-1, int(unix.ENOENT), w.path("missing"))}
	expectLines(t, r.tracer+": the workload's opens", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// pidpersec: 40 forks of /bin/true, then a sleep (one more fork) long
// enough for an interval to report them all.
func setupPidpersec(t *testing.T, w *workload) string {
	return w.script(t, "fork.sh", `i=0
while [ $i -lt 40 ]; do /bin/true; i=$((i+1)); done
/bin/sleep 1.5
`)
}

var forksLine = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d PIDs/sec: @: (\d+)$`)

func checkPidpersec(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	expectHeader(t, lines, "Tracing new processes... Hit Ctrl-C to end.")
	// Forks are counted system-wide: the workload's 41 are a lower bound.
	total := 0
	for _, m := range forksLine.FindAllStringSubmatch(r.Stdout, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	if total < 41 {
		t.Errorf("%s: %d forks reported, want at least the workload's 41:\n%s", r.tracer, total, r.Stdout)
	}
	return nil
}

// setuids: perl as root changes its fs uid, then its uids through
// setresuid and setuid, and finally fails a setresuid as nobody.
func setupSetuids(t *testing.T, w *workload) string {
	requireCommands(t, "perl")
	return w.script(t, "uid.sh", fmt.Sprintf(`exec /usr/bin/perl -e '
open(my $f, ">", "$ARGV[0]/pids") or die; print $f "$$\n"; close $f;
syscall(%[1]d, 1234) == 0 or die "setfsuid";
syscall(%[2]d, 0, 65534, 0) == 0 or die "setresuid: $!";
syscall(%[3]d, 0) == 0 or die "setuid(0): $!";
syscall(%[3]d, 65534) == 0 or die "setuid(65534): $!";
syscall(%[2]d, 0, 0, 0) == -1 or die "setresuid as nobody succeeded";
' $DIR
`, sysno(t, "setfsuid"), sysno(t, "setresuid"), sysno(t, "setuid")))
}

func checkSetuids(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing setuid(2) family syscalls. Hit Ctrl-C to end.",
		fmt.Sprintf("%-8s %-6s %-16s %-6s %-9s %s", "TIME", "PID", "COMM", "UID", "SYSCALL", "ARGS (RET)"))
	pids := w.pids(t, "pids")
	got := maskTime(linesWithField(lines, 1, strconv.Itoa(pids[0])))
	line := func(uid int, call string) string {
		return fmt.Sprintf("HH:MM:SS %-6d %-16s %-6d %s", pids[0], "perl", uid, call)
	}
	// The UID column is the real uid when the call starts.
	want := []string{
		line(0, "setfsuid  uid=1234 (prevuid=0)"),
		line(0, "setresuid ruid=0 euid=65534 suid=0 (0)"),
		line(0, "setuid    uid=0 (0)"),
		line(0, "setuid    uid=65534 (0)"),
		line(65534, fmt.Sprintf("setresuid ruid=0 euid=0 suid=0 (%d)", -int(unix.EPERM))),
	}
	expectLines(t, r.tracer+": the workload's uid changes", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// statsnoop: stat -f (statfs) of a file, then stat (statx) of it and of
// a missing file.
func setupStatsnoop(t *testing.T, w *workload) string {
	if err := os.WriteFile(w.path("present"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return w.script(t, "stat.sh", `/usr/bin/stat -f $DIR/present > /dev/null &
echo $! > $DIR/pids
wait
echo $$ >> $DIR/pids
exec /usr/bin/stat $DIR/present $DIR/missing > /dev/null 2>&1
`)
}

func checkStatsnoop(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing stat syscalls... Hit Ctrl-C to end.",
		fmt.Sprintf("%-6s %-16s %3s %s", "PID", "COMM", "ERR", "PATH"))
	pids := w.pids(t, "pids") // stat -f, stat
	got := linesWithField(lines, 3, w.path("present"), w.path("missing"))
	line := func(pid, errno int, path string) string {
		return fmt.Sprintf("%-6d %-16s %3d %s", pid, "stat", errno, path)
	}
	want := []string{
		line(pids[0], 0, w.path("present")),
		line(pids[1], 0, w.path("present")),
		line(pids[1], int(unix.ENOENT), w.path("missing")),
	}
	expectLines(t, r.tracer+": the workload's stats", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// syncsnoop: sync, sync -f (syncfs), sync -d (fdatasync) and sync FILE
// (fsync), each in a process of its own.
func setupSyncsnoop(t *testing.T, w *workload) string {
	if err := os.WriteFile(w.path("file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return w.script(t, "sync.sh", `rm -f $DIR/pids
for args in "" "-f $DIR/file" "-d $DIR/file" "$DIR/file"; do
	/bin/sync $args &
	echo $! >> $DIR/pids
	wait
done
`)
}

func checkSyncsnoop(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Tracing sync syscalls... Hit Ctrl-C to end.",
		fmt.Sprintf("%-9s %-6s %-16s %s", "TIME", "PID", "COMM", "EVENT"))
	pids := w.pids(t, "pids")
	got := maskTime(linesWithField(lines, 1, itoas(pids)...))
	var want []string
	for i, call := range []string{"sync", "syncfs", "fdatasync", "fsync"} {
		want = append(want, fmt.Sprintf("HH:MM:SS  %-6d %-16s tracepoint:syscalls:sys_enter_%s", pids[i], "sync", call))
	}
	expectLines(t, r.tracer+": the workload's syncs", got, want)
	return append(cmp, maskPids(got, pids)...)
}

// syscount: dd under a unique name copies 20000 single bytes: 20000 reads
// and 20000 writes, plus the calls of its start and exit in the C locale.
const syscountBytes = 20000

func setupSyscount(t *testing.T, w *workload) string {
	w.uniqueComm(t, "gtsc", "/usr/bin/dd")
	return w.script(t, "count.sh", fmt.Sprintf("LC_ALL=C exec $DIR/%s if=/dev/zero of=/dev/null bs=1 count=%d status=none\n",
		w.comm, syscountBytes))
}

var syscountRow = regexp.MustCompile(`^@(syscall|process)\[(.*)\]: (\d+)$`)

func checkSyscount(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	cmp := expectHeader(t, lines, "Counting syscalls... Hit Ctrl-C to end.")
	// END prints "\nTop 10 syscalls IDs:", ten rows, then the same for
	// processes. Calls are counted system-wide, so only the workload's
	// row and the read and write rows have values the workload fixes.
	sections := map[string][]string{}
	var section string
	for _, l := range lines[1:] {
		switch {
		case l == "Top 10 syscalls IDs:" || l == "Top 10 processes:":
			section = l
			cmp = append(cmp, l)
		case l == "":
		case section == "":
			t.Errorf("%s: unexpected line %q before END's output", r.tracer, l)
		default:
			sections[section] = append(sections[section], l)
		}
	}
	ids, procs := sections["Top 10 syscalls IDs:"], sections["Top 10 processes:"]
	// Fewer than ten processes may have made calls in a short run.
	if len(ids) != 10 || len(procs) < 1 || len(procs) > 10 {
		t.Errorf("%s: want 10 rows of syscalls and 1 to 10 of processes:\n%s", r.tracer, r.Stdout)
	}
	values := map[string]int{}
	for _, rows := range [][]string{ids, procs} {
		prev := 0
		for _, l := range rows {
			m := syscountRow.FindStringSubmatch(l)
			if m == nil {
				t.Errorf("%s: not a map row: %q", r.tracer, l)
				continue
			}
			n, _ := strconv.Atoi(m[3])
			if n < prev {
				t.Errorf("%s: rows not in ascending order at %q:\n%s", r.tracer, l, r.Stdout)
			}
			prev = n
			values[m[1]+" "+m[2]] = n
		}
	}
	// x86-64 and arm64 number read and write differently.
	read, write := "0", "1"
	if runtime.GOARCH == "arm64" {
		read, write = "63", "64"
	}
	for _, id := range []string{read, write} {
		if n, ok := values["syscall "+id]; !ok || n < syscountBytes {
			t.Errorf("%s: @syscall[%s] = %d (listed %v), want at least the workload's %d", r.tracer, id, n, ok, syscountBytes)
		}
	}
	// dd's start and exit take a few dozen calls.
	n, ok := values["process "+w.comm]
	if !ok || n < 2*syscountBytes || n > 2*syscountBytes+100 {
		t.Errorf("%s: @process[%s] = %d (listed %v), want %d reads and writes and under 100 other calls:\n%s",
			r.tracer, w.comm, n, ok, 2*syscountBytes, r.Stdout)
	}
	return append(cmp, fmt.Sprintf("@process[%s]: %d", w.comm, n))
}

// writeback: buffered writes to a loop device that the script keeps
// open (a last close would write them back itself), then sync.
func setupWriteback(t *testing.T, w *workload) string {
	w.loopDevice(t)
	return w.script(t, "wb.sh", fmt.Sprintf(`exec 3<> %[1]s
/usr/bin/dd if=/dev/zero of=%[1]s bs=4096 count=64 seek=16 conv=notrunc status=none
/bin/sync
`, w.dev))
}

var writebackLine = regexp.MustCompile(`^(\d\d:\d\d:\d\d)  (\S+) +(\d+) +(\S+) +(\d+)\.(\d+)$`)

func checkWriteback(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	expectHeader(t, lines, "Tracing writeback... Hit Ctrl-C to end.",
		fmt.Sprintf("%-9s %-8s %-8s %-16s %s", "TIME", "DEVICE", "PAGES", "REASON", "ms"))
	dev := devNumber(t, w.dev)
	reasons := map[string]bool{"background": true, "vmscan": true, "sync": true, "periodic": true,
		"laptop_timer": true, "free_more_memory": true, "fs_free_space": true, "forker_thread": true}
	synced := false
	for _, l := range linesWithField(lines, 1, dev) {
		m := writebackLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("%s: malformed line %q", r.tracer, l)
			continue
		}
		pages, _ := strconv.Atoi(m[3])
		ms, _ := strconv.Atoi(m[5])
		frac, _ := strconv.Atoi(m[6])
		if want := fmt.Sprintf("%s  %-8s %-8d %-16s %d.%03d", m[1], dev, pages, m[4], ms, frac); l != want {
			t.Errorf("%s: line %q, want it formatted %q", r.tracer, l, want)
		}
		if !reasons[m[4]] {
			t.Errorf("%s: unknown reason in %q", r.tracer, l)
		}
		synced = synced || m[4] == "sync"
	}
	if !synced {
		t.Errorf("%s: no writeback of %s (%s) for sync:\n%s", r.tracer, w.dev, dev, r.Stdout)
	}
	return nil
}

// cpuwalk: a busy loop on every CPU for 1.5s, so every sample of those
// CPUs is of a task.
func setupCpuwalk(t *testing.T, w *workload) string {
	requireCommands(t, "taskset", "timeout")
	return w.script(t, "walk.sh", busyLoops(t, 1, "1.5")+"wait\n")
}

// histRows parses the rows of the histogram under header: labels and
// counts, checking each row's layout against histRow.
func histRows(t *testing.T, r toolRun, header string) (labels []string, counts []int) {
	t.Helper()
	block := mapBlock(outLines(r.Stdout), header)
	if len(block) < 2 {
		t.Fatalf("%s: no histogram %q:\n%s", r.tracer, header, r.Stdout)
	}
	row := regexp.MustCompile(`^(.*?) +(\d+) \|@* *\|$`)
	max := 0
	for _, l := range block[1:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: not a histogram row: %q", r.tracer, l)
		}
		n, _ := strconv.Atoi(m[2])
		labels, counts = append(labels, m[1]), append(counts, n)
		if n > max {
			max = n
		}
	}
	for i, l := range block[1:] {
		if want := strings.TrimSuffix(harness.HistRow(labels[i], counts[i], max), "\n"); l != want {
			t.Errorf("%s: row %q, want %q", r.tracer, l, want)
		}
	}
	if counts[0] == 0 || counts[len(counts)-1] == 0 {
		t.Errorf("%s: histogram does not start and end with a non-empty bucket:\n%s", r.tracer, strings.Join(block, "\n"))
	}
	return labels, counts
}

func checkCpuwalk(t *testing.T, w *workload, r toolRun) []string {
	expectHeader(t, outLines(r.Stdout), "Sampling CPU at 99hz... Hit Ctrl-C to end.")
	labels, counts := histRows(t, r, "@cpu:")
	byCPU := map[int]int{}
	for i, l := range labels {
		cpu, err := strconv.Atoi(strings.Trim(l, "[]"))
		if err != nil || l != fmt.Sprintf("[%d]", cpu) {
			t.Errorf("%s: label %q is not a single CPU", r.tracer, l)
		}
		if i > 0 && labels[i-1] != fmt.Sprintf("[%d]", cpu-1) {
			t.Errorf("%s: label %q does not follow %q", r.tracer, l, labels[i-1])
		}
		byCPU[cpu] = counts[i]
	}
	// 99 samples a second on each CPU: the 1.5s of busy loop give about
	// 150, and no CPU can have more than the whole run allows.
	max := int(r.Elapsed.Seconds()*99) + 2
	for _, c := range allowedCPUs(t) {
		if n := byCPU[c]; n < 50 || n > max {
			t.Errorf("%s: CPU %d has %d samples, want 50..%d", r.tracer, c, n, max)
		}
	}
	return nil
}

// runqlat: two busy loops per CPU for a second, while perl wakes from 200
// short sleeps: each wakeup is one run queue latency, and the loops
// spread them over several buckets.
func setupRunqlat(t *testing.T, w *workload) string {
	requireCommands(t, "taskset", "timeout", "perl")
	return w.script(t, "runq.sh", busyLoops(t, 2, "1")+
		"/usr/bin/perl -e 'select(undef, undef, undef, 0.002) for 1..200'\nwait\n")
}

// log2Labels are hist()'s bucket labels from 0 up: [0], [1], [2, 4), ...
func log2Labels() []string {
	power := func(j int) string {
		return fmt.Sprintf("%d%s", 1<<(j%10), []string{"", "K", "M", "G", "T", "P", "E"}[j/10])
	}
	labels := []string{"[0]", "[1]"}
	for j := 1; j < 64; j++ {
		labels = append(labels, fmt.Sprintf("[%s, %s)", power(j), power(j+1)))
	}
	return labels
}

func checkRunqlat(t *testing.T, w *workload, r toolRun) []string {
	expectHeader(t, outLines(r.Stdout), "Tracing CPU scheduler... Hit Ctrl-C to end.")
	labels, counts := histRows(t, r, "@usecs:")
	all := log2Labels()
	first := -1
	for i, l := range all {
		if l == labels[0] {
			first = i
		}
	}
	if first < 0 || first+len(labels) > len(all) {
		t.Fatalf("%s: labels %q are not hist() buckets", r.tracer, labels)
	}
	expectLines(t, r.tracer+": bucket labels", labels, all[first:first+len(labels)])
	total, buckets := 0, 0
	for _, n := range counts {
		total += n
		if n > 0 {
			buckets++
		}
	}
	if total < 200 || buckets < 3 {
		t.Errorf("%s: %d latencies in %d buckets, want at least perl's 200 wakeups over 3 buckets", r.tracer, total, buckets)
	}
	return nil
}

// tcpdrop: in a network namespace of its own, whose loopback queue
// (pfifo, limit 0) drops every packet, perl connects from port 40001 to
// 40002 without blocking: its SYN is dropped within its connect(), with
// the socket in SYN_SENT, and perl exits before the retransmission.
// (A connection refused on loopback drops the SYN with no socket, which
// tcpdrop ignores.)
func setupTcpdrop(t *testing.T, w *workload) string {
	requireCommands(t, "unshare", "ip", "tc", "perl")
	w.script(t, "netns.sh", `ip link set lo up || exit 1
tc qdisc add dev lo root pfifo limit 0 || exit 1
exec /usr/bin/perl -MSocket -MFcntl -e '
open(my $f, ">", "$ARGV[0]/pids") or die; print $f "$$\n"; close $f;
socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
bind($s, pack_sockaddr_in(40001, inet_aton("127.0.0.1"))) or die "bind: $!";
fcntl($s, F_SETFL, O_NONBLOCK) or die "fcntl: $!";
connect($s, pack_sockaddr_in(40002, inet_aton("127.0.0.1")));
select(undef, undef, undef, 0.3);
' $DIR
`)
	return w.script(t, "drop.sh", "exec /usr/bin/unshare --net /bin/sh $DIR/netns.sh\n")
}

var stackFrame = regexp.MustCompile(`^ {8}\S+\+\d+$`)

func checkTcpdrop(t *testing.T, w *workload, r toolRun) []string {
	lines := outLines(r.Stdout)
	expectHeader(t, lines, "Tracing tcp drops. Hit Ctrl-C to end.",
		fmt.Sprintf("%-8s %-8s %-16s %-21s %-21s %-8s", "TIME", "PID", "COMM", "SADDR:SPORT", "DADDR:DPORT", "STATE"))
	pids := w.pids(t, "pids")
	want := fmt.Sprintf("HH:MM:SS %-8d %-16s %39s:%-6d %39s:%-6d %-10s", pids[0], "perl", "127.0.0.1", 40001, "127.0.0.1", 40002, "SYN_SENT")
	found := 0
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 || f[1] != strconv.Itoa(pids[0]) {
			continue
		}
		found++
		expectLines(t, r.tracer+": the workload's drop", maskTime([]string{l}), []string{want})
		// kstack follows: an empty line, then frames.
		if i+2 >= len(lines) || lines[i+1] != "" || !stackFrame.MatchString(lines[i+2]) {
			t.Errorf("%s: no kernel stack after %q:\n%s", r.tracer, l, r.Stdout)
		}
	}
	if found != 1 {
		t.Errorf("%s: %d drops by perl (pid %d), want 1:\n%s", r.tracer, found, pids[0], r.Stdout)
	}
	return nil
}

// toolNeeds are the groups of tools that need what not every kernel
// has, with the probe they fail on where it is missing. The NVMe tools
// trace the nvme driver's tracepoints, which a kernel without the driver,
// as this host's, has not: there they fail with a located error that
// names it, and the VM tests run them.
var toolNeeds = map[string]string{
	"nvme": "rawtracepoint:nvme_setup_cmd",
}

// exampleArgs are the positional parameters and program options of the
// first example of the tool at path: what its frame makes of the
// example's command line.
func exampleArgs(t *testing.T, path string) []string {
	t.Helper()
	tool, err := gttools.Lookup(strings.TrimSuffix(filepath.Base(path), ".bt"))
	if err != nil {
		t.Fatal(err)
	}
	words, _, err := gttools.SplitExample(tool.Examples[0])
	if err != nil {
		t.Fatal(err)
	}
	run, err := tool.ParseArgs(words[1:])
	if err != nil {
		t.Fatalf("%s: example %q: %v", path, tool.Examples[0], err)
	}
	args := run.Params
	if len(run.Named) > 0 {
		args = append(args, "--")
		for _, n := range run.Named {
			args = append(args, "--"+n)
		}
	}
	return args
}

// TestStorageToolsDryRun compiles gtrace's tools, each with its first
// example's arguments, and loads them through this kernel's verifier;
// the VM tests run them on disks. Where this
// kernel refuses fentry programs, a tool with one is compiled only
// (--emit-elf).
func TestStorageToolsDryRun(t *testing.T) {
	testutils.RequireRoot(t)
	tools, err := filepath.Glob("../../tools/*/*.bt")
	if err != nil || len(tools) == 0 {
		t.Fatalf("no tools in ../../tools: %v", err)
	}
	for _, tool := range tools {
		r := harness.Gtrace(t, append([]string{"--dry-run", tool}, exampleArgs(t, tool)...)...)
		need, ok := toolNeeds[filepath.Base(filepath.Dir(tool))]
		if ok && harness.Gtrace(t, "-l", need).Stdout == "" {
			missing := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(tool) +
				`:\d+:\d+-\d+: ERROR: Probe has no valid attach points\..*\n` + regexp.QuoteMeta(need) + `$`)
			if r.Code != 1 || !missing.MatchString(r.Stderr) {
				t.Errorf("%s: exit code %d, want 1 and a located error for the missing %s; stderr:\n%s", tool, r.Code, need, r.Stderr)
			}
			continue
		}
		if r.Code != 0 && strings.Contains(r.Stderr, "this kernel does not allow fentry probes") {
			t.Logf("%s: this kernel refuses fentry programs: compiling only", tool)
			r = harness.Gtrace(t, append([]string{"--dry-run", "--emit-elf", filepath.Join(t.TempDir(), "tool.o"), tool}, exampleArgs(t, tool)...)...)
		}
		if r.Code != 0 {
			t.Errorf("%s: exit code %d, stderr:\n%s", tool, r.Code, r.Stderr)
		}
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// ddMixed, like harness.DDOneByte, is a workload with known syscalls.
// With status=none dd reads only blocks of ibs bytes on fd 0 and writes
// only blocks of obs bytes on fd 1, plus one short write for the
// remainder: here 7 reads of 3 bytes (21 bytes), written as 10, 10 and 1
// bytes.
var ddMixed = harness.DD("ibs=3 obs=10 count=7")

// writesFd1 is the probe on the -c command's writes to fd 1.
const writesFd1 = "tracepoint:syscalls:sys_enter_write /pid == cpid && args.fd == 1/"

func TestAggregations(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name, cmd, script, want string
	}{
		{"count", harness.DDOneByte, harness.ReadsFd0 + " { @ = count(); }", "@: 37\n"},
		{"count tracepoint alias", harness.DDOneByte,
			"t:syscalls:sys_enter_read /pid == cpid && args.fd == 0/ { @ = count(); }", "@: 37\n"},
		{"sum", ddMixed, writesFd1 + " { @ = sum(args.count); }", "@: 21\n"},
		{"avg", ddMixed, writesFd1 + " { @ = avg(args.count); }", "@: 7\n"},
		{"min", ddMixed, writesFd1 + " { @ = min(args.count); }", "@: 1\n"},
		{"max", ddMixed, writesFd1 + " { @ = max(args.count); }", "@: 10\n"},
		{"stats", ddMixed, writesFd1 + " { @ = stats(args.count); }",
			"@: { .count = 3, .average = 7, .total = 21 }\n"},
		{"hist single bucket", harness.DDOneByte, harness.ReadsFd0 + " { @h = hist(args.count); }",
			"@h:\n" + harness.HistRow("[1]", 37, 37)},
		{"hist", ddMixed, writesFd1 + " { @h = hist(args.count); }",
			"@h:\n" + harness.HistRow("[1]", 1, 2) + harness.HistRow("[2, 4)", 0, 2) +
				harness.HistRow("[4, 8)", 0, 2) + harness.HistRow("[8, 16)", 2, 2)},
		{"lhist", ddMixed, writesFd1 + " { @l = lhist(args.count, 0, 20, 5); }",
			"@l:\n" + harness.HistRow("[0, 5)", 1, 2) + harness.HistRow("[5, 10)", 0, 2) +
				harness.HistRow("[10, 15)", 2, 2)},
		{"lhist overflow bucket", ddMixed, writesFd1 + " { @l = lhist(args.count, 0, 10, 2); }",
			"@l:\n" + harness.HistRow("[0, 2)", 1, 2) + harness.HistRow("[2, 4)", 0, 2) +
				harness.HistRow("[4, 6)", 0, 2) + harness.HistRow("[6, 8)", 0, 2) +
				harness.HistRow("[8, 10)", 0, 2) + harness.HistRow("[10, ...)", 2, 2)},
		{"hist with 4 buckets per power of 2", ddMixed, writesFd1 + " { @h = hist(args.count, 2); }",
			"@h:\n" + harness.HistRow("[1]", 1, 2) + harness.HistRow("[2]", 0, 2) + harness.HistRow("[3]", 0, 2) +
				harness.HistRow("[4]", 0, 2) + harness.HistRow("[5]", 0, 2) + harness.HistRow("[6]", 0, 2) +
				harness.HistRow("[7]", 0, 2) + harness.HistRow("[8, 10)", 0, 2) + harness.HistRow("[10, 12)", 2, 2)},
		// A key-less hist lives in an array (codegen.TestArrayMapKinds): cleared,
		// it prints as a map never written; zeroed, as a hash map does.
		{"hist cleared", ddMixed, writesFd1 + " { @h = hist(args.count); } END { clear(@h); }", ""},
		{"hist zeroed", ddMixed, writesFd1 + " { @h = hist(args.count); } END { zero(@h); }", "@h:\n"},
		{"string key", harness.DDOneByte, harness.ReadsFd0 + " { @[comm] = count(); }", "@[dd]: 37\n"},
		{"int key", ddMixed, writesFd1 + " { @[args.count] = count(); }", "@[1]: 1\n@[10]: 2\n"},
		{"string key avg", ddMixed, writesFd1 + " { @[comm] = avg(args.count); }", "@[dd]: 7\n"},
		{"string and int key", ddMixed, writesFd1 + " { @[comm, args.count] = sum(args.count); }",
			"@[dd, 1]: 1\n@[dd, 10]: 20\n"},
		{"several maps", ddMixed,
			harness.ReadsFd0 + " { @reads = count(); @rbytes = sum(args.count); } " +
				writesFd1 + " { @writes = count(); @wmax = max(args.count); }",
			"@rbytes: 21\n@reads: 7\n@wmax: 10\n@writes: 3\n"},
		{"predicate on field", ddMixed,
			"tracepoint:syscalls:sys_enter_write /pid == cpid && args.count > 5/ { @ = count(); }", "@: 2\n"},
		{"if else", ddMixed,
			writesFd1 + " { if (args.count == 10) { @ten = count(); } else { @other = count(); } }",
			"@other: 1\n@ten: 2\n"},
		{"variables", ddMixed,
			writesFd1 + " { $double = args.count * 2; @ = sum($double); }", "@: 42\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "-c", tc.cmd, "-e", tc.script)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if got := harness.MapOutput(r.Stdout); got != tc.want {
				t.Errorf("script: %s\ngot:\n%s\nwant:\n%s", tc.script, got, tc.want)
			}
		})
	}
}

// TestTupleKeyPid checks that @[comm, pid] shows the child's real pid. The
// workload records its own pid and then execs dd, which keeps that pid.
func TestTupleKeyPid(t *testing.T) {
	testutils.RequireRoot(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := harness.WriteScript(t, "work.sh", fmt.Sprintf("echo $$ > %s\nexec %s\n", pidFile, harness.DDOneByte))
	r := harness.Gtrace(t, "-c", script, "-e", harness.ReadsFd0+" { @[comm, pid] = count(); }")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("@[dd, %s]: 37\n", strings.TrimSpace(string(data)))
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestStrFilename reads a string argument through str(args.filename).
func TestStrFilename(t *testing.T) {
	testutils.RequireRoot(t)
	target := filepath.Join(t.TempDir(), "target-file")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args.filename) == "%s"/ { @[str(args.filename)] = count(); }`, target)
	r := harness.Gtrace(t, "-c", "/bin/cat "+target, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := fmt.Sprintf("@[%s]: 1\n", target)
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestPrintfPerEvent(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-c", ddMixed, "-e", writesFd1+` { printf("write %d by %s\n", args.count, comm); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "write 10 by dd\nwrite 10 by dd\nwrite 1 by dd\n"
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}

	// One line per event, N events.
	r = harness.Gtrace(t, "-c", harness.DDOneByte, "-e", harness.ReadsFd0+` { printf("r%d\n", args.count); }`)
	if got, want := harness.MapOutput(r.Stdout), strings.Repeat("r1\n", 37); got != want {
		t.Errorf("want 37 lines \"r1\", stdout:\n%s", r.Stdout)
	}
}

// TestBeginLanguage checks the language on values fixed by the program.
func TestBeginLanguage(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []scriptCase{
		{"while", `BEGIN { $i = 0; $s = 0; while ($i < 10) { $s += $i; $i++; } printf("%d\n", $s); exit(); }`, "45\n"},
		{"unroll", `BEGIN { unroll(5) { @u++; } print(@u); clear(@u); exit(); }`, "@u: 5\n"},
		{"if else", `BEGIN { $x = 3; if ($x > 5) { printf("big\n"); } else { printf("small\n"); } exit(); }`, "small\n"},
		{"delete", `BEGIN { @a[1] = 1; @a[2] = 2; delete(@a[1]); exit(); }`, "@a[2]: 2\n"},
		{"zero", `BEGIN { @b = 5; zero(@b); exit(); }`, "@b: 0\n"},
		{"clear", `BEGIN { @c[1] = 3; clear(@c); @d = 1; exit(); }`, "@d: 1\n"},
		{"string keys", `BEGIN { @s["b"] = 2; @s["a"] = 1; exit(); }`, "@s[a]: 1\n@s[b]: 2\n"},
		{"tuple keys", `BEGIN { @t["x", 1] = 10; exit(); }`, "@t[x, 1]: 10\n"},
		{"str", `BEGIN { printf("%s|\n", str("hello")); exit(); }`, "hello|\n"},
		{"end probe", `BEGIN { exit(); } END { printf("end\n"); }`, "end\n"},
	}
	runScripts(t, tests)
}

func TestExitCode(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		script string
		args   []string
		want   int
	}{
		{"BEGIN { exit(); }", nil, 0},
		{"BEGIN { exit(3); }", nil, 3},
		{"BEGIN { exit(0); }", nil, 0},
		{harness.ReadsFd0 + " { exit(5); }", []string{"-c", harness.DDOneByte}, 5},
		{"interval:ms:50 { exit(7); }", nil, 7},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			r := harness.Gtrace(t, append(tc.args, "-e", tc.script)...)
			if r.Code != tc.want {
				t.Errorf("exit code %d, want %d; stderr:\n%s", r.Code, tc.want, r.Stderr)
			}
		})
	}
}

// TestFileProgram runs a script file with positional parameters.
func TestFileProgram(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "../testdata/params.bt", "hello", "42")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got, want := harness.MapOutput(r.Stdout), "hello 43\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestPidOption traces a process started by the test, a shell that
// execs dd under the same pid once the test says so, and checks that
// gtrace counts dd's reads and exits when the process does.
func TestPidOption(t *testing.T) {
	testutils.RequireRoot(t)
	// The shell reads lines until "go", then becomes dd. BEGIN runs
	// before the probes attach, as in bpftrace, so readiness is the
	// probe itself answering the shell's reads.
	work := exec.Command("/bin/sh", "-c", `while read x && [ "$x" != go ]; do :; done; exec `+harness.DDOneByte)
	feed, err := work.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	defer work.Process.Kill()
	pid := work.Process.Pid

	// One probe, so that readiness and counting attach together.
	script := `tracepoint:syscalls:sys_enter_read /args.fd == 0/ {
	if (comm == "dd") { @[comm, pid] = count(); } else { printf("ready\n"); }
}`
	tracer := exec.Command(harness.Bin(), "-p", strconv.Itoa(pid), "-e", script)
	var stderr strings.Builder
	tracer.Stderr = &stderr
	ready := func(l string) bool { return l == "ready" }
	lines := harness.StartWait(t, tracer, harness.Stdout, ready, func() { io.WriteString(feed, "wait\n") })
	defer tracer.Process.Kill()
	io.WriteString(feed, "go\n")
	if err := work.Wait(); err != nil {
		t.Fatalf("workload: %v", err)
	}

	// gtrace must exit by itself once the traced pid is gone.
	var rest strings.Builder
	for l := range lines {
		if !ready(l) {
			rest.WriteString(l + "\n")
		}
	}
	done := make(chan error, 1)
	go func() { done <- tracer.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gtrace: %v, stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("gtrace did not exit after the traced process exited")
	}
	harness.CheckNoPanic(t, stderr.String())
	want := fmt.Sprintf("@[dd, %d]: 37\n", pid)
	if got := harness.MapOutput(rest.String()); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestInterval counts ticks: five ticks of 100ms, exiting on the fifth.
func TestInterval(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `interval:ms:100 { @n++; printf("tick %d\n", @n); if (@n == 5) { exit(); } }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n\n\n@n: 5\n"
	if got := harness.StripAttaching(r.Stdout); got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	if r.Elapsed < 500*time.Millisecond || r.Elapsed > 5*time.Second {
		t.Errorf("five 100ms ticks took %v", r.Elapsed)
	}
}

// busyLoop is a single-threaded CPU-bound workload of about 0.2s.
const busyLoop = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\n"

var countLine = regexp.MustCompile(`(?m)^@(\[busy\.sh\])?: (\d+)$`)

// sampleCount runs script against the busy loop and returns the count.
func sampleCount(t *testing.T, script string) (int, time.Duration) {
	t.Helper()
	r := harness.Gtrace(t, "-c", harness.WriteScript(t, "busy.sh", busyLoop), "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	m := countLine.FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("no count in stdout:\n%s", r.Stdout)
	}
	n, _ := strconv.Atoi(m[2])
	return n, r.Elapsed
}

// TestProfile samples the busy child at 99Hz. The child runs on one CPU
// for about 0.2s, so it gets roughly 20 samples and at most 99 per second
// of wall time.
func TestProfile(t *testing.T) {
	testutils.RequireRoot(t)
	n, elapsed := sampleCount(t, "profile:hz:99 /pid == cpid/ { @[comm] = count(); }")
	if max := int(elapsed.Seconds()*99) + 2; n < 3 || n > max {
		t.Errorf("got %d samples in %v, want 3..%d", n, elapsed, max)
	}
}

// TestSoftwareCpuClock samples every 1ms of CPU time of the busy child.
func TestSoftwareCpuClock(t *testing.T) {
	testutils.RequireRoot(t)
	n, elapsed := sampleCount(t, "software:cpu-clock:1000000 /pid == cpid/ { @ = count(); }")
	if max := int(elapsed.Milliseconds()) + 2; n < 30 || n > max {
		t.Errorf("got %d samples in %v, want 30..%d", n, elapsed, max)
	}
}

// TestRawTracepoint counts read syscalls (number 0 on x86-64) through the
// raw sys_enter tracepoint and checks them against the read tracepoint.
func TestRawTracepoint(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-c", harness.DDOneByte, "-e", "rawtracepoint:sys_enter /pid == cpid/ { @all = count(); }")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	m := regexp.MustCompile(`@all: (\d+)`).FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("no @all in stdout:\n%s", r.Stdout)
	}
	// 37 reads and 37 writes at least.
	if n, _ := strconv.Atoi(m[1]); n < 74 {
		t.Errorf("raw sys_enter count %d, want >= 74", n)
	}

	r = harness.Gtrace(t, "-c", harness.DDOneByte, "-e",
		"rawtracepoint:sys_enter /pid == cpid && arg1 == 0/ { @raw = count(); } "+
			"tracepoint:syscalls:sys_enter_read /pid == cpid/ { @tp = count(); }")
	if r.Code != 0 {
		t.Fatalf("arg1 in rawtracepoint: exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	m = regexp.MustCompile(`@raw: (\d+)\n@tp: (\d+)\n`).FindStringSubmatch(r.Stdout)
	if m == nil || m[1] != m[2] {
		t.Errorf("want equal @raw and @tp counts, got:\n%s", r.Stdout)
	}
}

// TestWildcard attaches sys_enter_read and sys_exit_read through one
// wildcard. The exit probe also sees the child's release read, which was
// entered before attaching: bpftrace shows the same.
func TestWildcard(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-c", harness.DDOneByte, "-e", "tracepoint:syscalls:sys_e*_read /pid == cpid/ { @[probe] = count(); }")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// Every read of the -c child, dd's from its execve on, enters and
	// returns under the probes.
	enter := regexp.MustCompile(`(?m)^@\[tracepoint:syscalls:sys_enter_read\]: (\d+)$`).FindStringSubmatch(r.Stdout)
	exit := regexp.MustCompile(`(?m)^@\[tracepoint:syscalls:sys_exit_read\]: (\d+)$`).FindStringSubmatch(r.Stdout)
	if enter == nil || exit == nil {
		t.Fatalf("want both probes in output, got:\n%s", r.Stdout)
	}
	if n, _ := strconv.Atoi(enter[1]); n < 37 || exit[1] != enter[1] {
		t.Errorf("enter %s, exit %s: want at least dd's 37 reads, each entered and returned", enter[1], exit[1])
	}
	if !strings.HasPrefix(r.Stderr, "Attached 2 probes\n") {
		t.Errorf("want 'Attached 2 probes' first on stderr, got:\n%s", r.Stderr)
	}
}

func TestJSONOutput(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-f", "json", "-c", ddMixed, "-e",
		writesFd1+` { @c = count(); @h = hist(args.count); @s[comm] = sum(args.count); @st = stats(args.count); printf("w %d\n", args.count); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := []string{
		`{"type": "printf", "data": "w 10\n"}`,
		`{"type": "printf", "data": "w 10\n"}`,
		`{"type": "printf", "data": "w 1\n"}`,
		`{"type": "map", "data": {"@c": 3}}`,
		`{"type": "hist", "data": {"@h": [{"min": 1, "max": 1, "count": 1}, {"min": 2, "max": 3, "count": 0}, {"min": 4, "max": 7, "count": 0}, {"min": 8, "max": 15, "count": 2}]}}`,
		`{"type": "map", "data": {"@s": {"dd": 21}}}`,
		`{"type": "stats", "data": {"@st": {"count": 3, "average": 7, "total": 21}}}`,
	}
	// Compare as JSON values: spacing is not part of the format. The
	// attached_probes record only reports the probe count.
	var got []any
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.TrimSpace(l) == "" || strings.Contains(l, `"attached_probes"`) {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", l, err)
		}
		got = append(got, v)
	}
	var wantV []any
	for _, l := range want {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		wantV = append(wantV, v)
	}
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("got:\n%s\nwant:\n%s", r.Stdout, strings.Join(want, "\n"))
	}
}

func TestOutputFile(t *testing.T) {
	testutils.RequireRoot(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	r := harness.Gtrace(t, "-o", out, "-e", `BEGIN { printf("hello\n"); @x = 1; exit(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if strings.TrimSpace(r.Stdout) != "" {
		t.Errorf("stdout should have no output with -o, got %q", r.Stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// bpftrace 0.17 prints the empty lines before the exit maps on stdout
	// even with -o, so only the lines with content are compared.
	got := strings.ReplaceAll(harness.StripAttaching(string(data)), "\n\n", "")
	if want := "hello\n@x: 1\n"; got != want {
		t.Errorf("file content %q, want %q", got, want)
	}
}

// TestDryRun loads through the verifier without attaching: no probe may
// fire, so a BEGIN printf must not run.
func TestDryRun(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "--dry-run", "-e", `BEGIN { printf("ran\n"); } tracepoint:syscalls:sys_enter_read { @ = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stdout, "ran") || strings.Contains(r.Stdout+r.Stderr, "Attached") {
		t.Errorf("dry run attached or ran probes:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}

	// -v reports per-probe verifier statistics.
	r = harness.Gtrace(t, "--dry-run", "-v", "-e", `tracepoint:syscalls:sys_enter_read { @ = count(); }`)
	if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "instructions") {
		t.Errorf("-v: exit %d, want instruction counts; stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestListProbes(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-l", "tracepoint:syscalls:sys_enter_read*")
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	found := false
	for _, l := range lines {
		if !strings.HasPrefix(l, "tracepoint:syscalls:sys_enter_read") {
			t.Errorf("listing has a line outside the search: %q", l)
		}
		found = found || l == "tracepoint:syscalls:sys_enter_read"
	}
	if !found {
		t.Errorf("tracepoint:syscalls:sys_enter_read not listed:\n%s", r.Stdout)
	}
}

func TestDumpAST(t *testing.T) {
	r := harness.Gtrace(t, "-d", "ast", "--dry-run", "-e", "BEGIN { exit(); }")
	if !strings.Contains(r.Stdout+r.Stderr, "BEGIN") {
		t.Errorf("-d ast does not show the probe:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
}

// scriptCase is a script that needs no workload and what it prints.
type scriptCase struct{ name, script, want string }

// runScripts runs each script with -e and compares its output, without
// the attaching line and the blank lines around the maps.
func runScripts(t *testing.T, tests []scriptCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "-e", tc.script)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if got := harness.MapOutput(r.Stdout); got != tc.want {
				t.Errorf("script: %s\ngot:\n%q\nwant:\n%q", tc.script, got, tc.want)
			}
		})
	}
}

// TestNotifyAttached checks the line bpftrace's test runner waits for: it
// comes once the probes are attached, before what BEGIN printed, and only
// when asked for.
func TestNotifyAttached(t *testing.T) {
	testutils.RequireRoot(t)
	script := `BEGIN { printf("begin\n"); } interval:ms:50 { printf("tick\n"); exit(); }`
	cmd := exec.Command(harness.Bin(), "-e", script)
	cmd.Env = append(os.Environ(), "__BPFTRACE_NOTIFY_PROBES_ATTACHED=1")
	r := harness.RunCmd(t, cmd, 30*time.Second)
	if want := "__BPFTRACE_NOTIFY_PROBES_ATTACHED\nbegin\ntick\n"; !strings.HasPrefix(r.Stdout, want) {
		t.Errorf("stdout %q, want it to start with %q", r.Stdout, want)
	}
	if r := harness.Gtrace(t, "-e", script); strings.Contains(r.Stdout, "NOTIFY") {
		t.Errorf("notified without being asked:\n%s", r.Stdout)
	}
}

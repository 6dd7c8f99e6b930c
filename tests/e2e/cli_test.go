package e2e

import (
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

// TestAttachedLine checks the line current bpftrace prints on stderr once
// its probes are attached, counted as it counts them, and -q's silence.
func TestAttachedLine(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		args   []string
		stdout string
		stderr string
	}{
		{[]string{"-e", `BEGIN { printf("x\n"); }`}, "x\n\n\n", "Attached 1 probe\n"},
		{[]string{"-e", `BEGIN { printf("x\n"); } END { }`}, "x\n\n\n", "Attached 2 probes\n"},
		{[]string{"--quiet", "-e", `BEGIN { printf("x\n"); }`}, "x\n\n\n", ""},
		{[]string{"-f", "json", "-e", `BEGIN { }`}, `{"type": "attached_probes", "count": 1, "data": {"probes": 1}}` + "\n", ""},
	}
	for _, tt := range tests {
		r := harness.Gtrace(t, tt.args...)
		if r.Code != 0 || r.Stdout != tt.stdout || r.Stderr != tt.stderr {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q\nwant stdout %q\nstderr %q", tt.args, r.Code, r.Stdout, r.Stderr, tt.stdout, tt.stderr)
		}
	}
}

// TestListScript lists the probes of a script, as -l -e and -l FILE do:
// not BEGIN or END, and a count or a rate left empty.
func TestListScript(t *testing.T) {
	testutils.RequireRoot(t)
	script := "BEGIN { } interval:ms:100 { } t:sched:sched_switch { } software:cpu-clock:1000 { } END { }"
	want := "interval:ms:\ntracepoint:sched:sched_switch\nsoftware:cpu-clock:\n"
	file := filepath.Join(t.TempDir(), "probes.bt")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-l", "-e", script}, {"--list", file}} {
		if r := harness.Gtrace(t, args...); r.Code != 0 || r.Stdout != want {
			t.Errorf("%q: exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, want, r.Stderr)
		}
	}
	r := harness.Gtrace(t, "-l", "no_such_file.bt")
	if want := "WARNING: It appears that 'no_such_file.bt' is a filename but the file does not exist. Treating 'no_such_file.bt' as a search pattern.\n"; r.Code != 0 || r.Stderr != want {
		t.Errorf("-l no_such_file.bt: exit %d, stderr %q, want %q", r.Code, r.Stderr, want)
	}
}

// TestListByPid lists the uprobes of a live process: its program and the
// libraries it maps, and, as a search, nothing from other files.
func TestListByPid(t *testing.T) {
	testutils.RequireRoot(t)
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	pid := strconv.Itoa(sleep.Process.Pid)
	// The dynamic loader maps libc a moment after exec.
	deadline := time.Now().Add(5 * time.Second)
	for {
		maps, _ := os.ReadFile("/proc/" + pid + "/maps")
		if strings.Contains(string(maps), "libc") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := harness.Gtrace(t, "-l", "uprobe:*:clock_nanosleep", "-p", pid)
	if !regexp.MustCompile(`(?m)^uprobe:/\S*libc\.so\.6:clock_nanosleep$`).MatchString(r.Stdout) || r.Code != 0 {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "--list", "--pid", pid)
	if !strings.Contains(r.Stdout, "\nuprobe:") || !strings.Contains(r.Stdout, "\ntracepoint:") {
		t.Errorf("-l -p: want kernel probes and the process's uprobes, got %d bytes, stderr:\n%s", len(r.Stdout), r.Stderr)
	}
}

// TestProbeFilter runs only the probes --probe-filter matches, with
// BEGIN and END, and nothing when it matches none.
func TestProbeFilter(t *testing.T) {
	testutils.RequireRoot(t)
	script := `BEGIN { printf("begin\n"); } interval:ms:100 { printf("bad\n"); exit(); } ` +
		`interval:ms:200 { printf("hit\n"); exit(); } END { printf("end\n"); }`
	r := harness.Gtrace(t, "--probe-filter", ":200", "-e", script)
	if r.Code != 0 || r.Stdout != "begin\nhit\nend\n\n\n" || r.Stderr != "Attached 3 probes\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "--probe-filter", "nothing", "-e", `interval:ms:100 { exit(); }`)
	if r.Code != 1 || r.Stdout != "No probes to attach\n" {
		t.Errorf("no match: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "--probe-filter", "[bad", "-e", `BEGIN { }`)
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "ERROR: Invalid --probe-filter regex '[bad': ") {
		t.Errorf("bad regex: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestHelperErrors checks -k: a map read of a missing key warns at its
// place in the script, in text on stderr and in JSON on stdout.
func TestHelperErrors(t *testing.T) {
	testutils.RequireRoot(t)
	script := `interval:ms:10 { @[1] = 1; printf("%d\n", @[2]); exit(); }`
	r := harness.Gtrace(t, "-k", "-e", script)
	want := "Attached 1 probe\n" +
		"stdin:1:43-47: WARNING: Can't lookup map element because it does not exist.\n" +
		"Additional Info - helper: map_lookup_elem, retcode: 0\n" + script + "\n" +
		strings.Repeat(" ", 42) + "~~~~\n"
	if r.Code != 0 || r.Stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}
	r = harness.Gtrace(t, "-k", "-q", "-f", "json", "-e", script)
	if want := `{"type": "helper_error", "msg": "Success", "helper": "map_lookup_elem", "retcode": 0, "filename": "stdin", "line": 1, "col": 43}`; !strings.Contains(r.Stdout, want+"\n") {
		t.Errorf("json: stdout:\n%s\nwant a line:\n%s", r.Stdout, want)
	}
	if r := harness.Gtrace(t, "-e", script); strings.Contains(r.Stderr, "WARNING") {
		t.Errorf("warned without -k:\n%s", r.Stderr)
	}
}

// TestOutputOptions checks --include, --output and -B.
func TestOutputOptions(t *testing.T) {
	testutils.RequireRoot(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "defs.h"), []byte("#define ANSWER 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	script := `BEGIN { printf("%d %d\n", ANSWER, EPERM); }`
	for _, mode := range []string{"line", "full", "none"} {
		r := harness.Gtrace(t, "-I", dir, "--include", "defs.h", "--include", "errno.h", "-B", mode, "--output", out, "-e", script)
		data, _ := os.ReadFile(out)
		if r.Code != 0 || string(data) != "42 1\n\n\n" {
			t.Errorf("-B %s: exit %d, file %q, stderr:\n%s", mode, r.Code, data, r.Stderr)
		}
	}
	r := harness.Gtrace(t, "--include", "no_such.h", "-e", script)
	if r.Code != 1 || !strings.Contains(r.Stderr, "ERROR: --include no_such.h: file not found") {
		t.Errorf("missing include: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestCatMissingFile checks cat()'s message for a file that is not
// there, worded as bpftrace words it.
func TestCatMissingFile(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `BEGIN { cat("/does/not/exist/file"); }`)
	if want := "ERROR: failed to open file '/does/not/exist/file' (No such file or directory)\n"; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q, want %q in it", r.Stderr, want)
	}
}

// TestSIGUSR1Ignored checks that SIGUSR1, with no self:signal probe
// waiting for it, neither stops gtrace nor prints anything.
func TestSIGUSR1Ignored(t *testing.T) {
	testutils.RequireRoot(t)
	cmd := exec.Command(harness.Bin(), "-e", `interval:ms:1500 { printf("done\n"); exit(); }`)
	go func() {
		time.Sleep(700 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGUSR1)
	}()
	r := harness.RunCmd(t, cmd, 30*time.Second)
	if r.Code != 0 || r.Stdout != "done\n\n\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestInfoAndVersion checks --info's sections and --version's line.
func TestInfoAndVersion(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "--info")
	for _, want := range []string{"System\n", "Kernel helpers\n", "Kernel features\n", "Probe types\n", "  kprobe_session: "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("--info: no %q in:\n%s", want, r.Stdout)
		}
	}
	if r := harness.Gtrace(t, "--version"); !regexp.MustCompile(`^bpftrace v\d+\.\d+\.\d+ \(gtrace .+\)\n$`).MatchString(r.Stdout) {
		t.Errorf("--version: %q", r.Stdout)
	}
}

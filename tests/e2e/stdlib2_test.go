package e2e

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestStdlib2 runs find, is_err, default_str_length, kfunc_exist and
// kfunc_allowed.
func TestStdlib2(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-e", `BEGIN { @m[2] = (1, "hello"); let $v; if (find(@m, 2, $v)) { print($v); } if (!find(@m, 3, $v)) { printf("missing\n"); } clear(@m); exit(); }`},
			[]string{"(1, hello)", "missing"}},
		{[]string{"-e", `BEGIN { @m["a"] = "long string"; $s = "x"; find(@m, "a", $s); printf("%s\n", $s); exit(); }`},
			[]string{"long string"}},
		{[]string{"-e", `BEGIN { printf("%d %d %d %d\n", is_err(-22), is_err(-4095), is_err(0), is_err(-4096)); exit(); }`},
			[]string{"1 1 0 0"}},
		{[]string{"-e", `config = { max_strlen = 100 } BEGIN { printf("%d\n", default_str_length()); exit(); }`},
			[]string{"100"}},
		{[]string{"-e", `BEGIN { printf("%d %d %d\n", kfunc_exist("vfs_read"), kfunc_exist("nosuch_kfunc"), kfunc_allowed("nosuch_kfunc")); exit(); }`},
			[]string{"1 0 0"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := harness.Gtrace(t, tt.args...)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stdout, w+"\n") {
					t.Errorf("stdout %q, want a line %q", r.Stdout, w)
				}
			}
		})
	}
}

// TestCgroupid checks cgroupid() of the root of the cgroup v2
// hierarchy: the inode number of its directory.
func TestCgroupid(t *testing.T) {
	testutils.RequireRoot(t)
	root := cgroup2Mount(t)
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		t.Fatal(err)
	}
	r := harness.Gtrace(t, "-e", `BEGIN { printf("%d\n", cgroupid("`+root+`")); exit(); }`)
	if want := strconv.FormatUint(st.Ino, 10); r.Code != 0 || !strings.Contains(r.Stdout, want+"\n") {
		t.Errorf("exit code %d, stdout %q, stderr %q; want a line %s", r.Code, r.Stdout, r.Stderr, want)
	}
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted.
func cgroup2Mount(t *testing.T) string {
	f, err := os.Open("/proc/mounts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) > 2 && f[2] == "cgroup2" {
			return f[1]
		}
	}
	testutils.Skip(t, "no cgroup2 mount")
	return ""
}

// TestSignalThread sends the -c command a signal from a tracepoint,
// and checks a bad signal number's error when the probe runs.
func TestSignalThread(t *testing.T) {
	testutils.RequireRoot(t)
	start := time.Now()
	r := harness.Gtrace(t, "--unsafe", "-c", "sleep 20", "-e",
		`tracepoint:syscalls:sys_enter_clock_nanosleep /pid == cpid/ { signal_thread("SIGTERM"); printf("sent\n"); }`)
	if r.Code != 0 || !strings.Contains(r.Stdout, "sent\n") || time.Since(start) > 15*time.Second {
		t.Errorf("exit code %d after %v, stdout %q, stderr %q; want sleep killed", r.Code, time.Since(start), r.Stdout, r.Stderr)
	}
	r = harness.Gtrace(t, "--unsafe", "-c", "sleep 0.1", "-e",
		`tracepoint:syscalls:sys_enter_clock_nanosleep /pid == cpid/ { $s = 0; signal_thread($s); }`)
	want := "stdin:1:71-88: ERROR: signal_thread() expects an integer between 1 and 64 (inclusive). Got 0\n"
	if !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q, want %q", r.Stderr, want)
	}
}

// TestUnwatch removes the watchpoint the first write hits, which the
// second then does not: watchedProgram writes its page's first byte
// twice. unwatch() of another address leaves it.
func TestUnwatch(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "watched", map[string]string{"watched.c": watchedProgram}, "-pthread")
	for _, tt := range []struct {
		addr string
		hits int
	}{{"0x10000000", 1}, {"0x10000001", 2}} {
		r := harness.Gtrace(t, "-c", bin, "-e", `watchpoint:0x10000000:1:w { printf("hit\n"); unwatch(`+tt.addr+`); }`)
		if r.Code != 0 {
			if strings.Contains(r.Stderr, "perf_event_open breakpoint") {
				testutils.Skip(t, "this machine has no hardware breakpoints: "+r.Stderr)
			}
			t.Fatalf("unwatch(%s): exit %d\n%s", tt.addr, r.Code, r.Stderr)
		}
		if got := strings.Count(r.Stdout, "hit\n"); got != tt.hits {
			t.Errorf("unwatch(%s): %d hits, want %d\n%s", tt.addr, got, tt.hits, r.Stdout)
		}
	}
}

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
	"gtrace/tests/internal/harness"
)

// watchedProgram maps a page at 0x10000000, copies a function there
// (nop; ret), waits for the tracer, then writes the page's first byte,
// runs the function, and writes again from a new thread.
const watchedProgram = `
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static void *writer(void *p) { ((volatile char *)p)[0] = 2; return 0; }
int main(void) {
	char *p = mmap((void *)0x10000000, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED) return 1;
	memcpy(p + 64, "\x90\xc3", 2);
	usleep(300000);
	((volatile char *)p)[0] = 1;
	((void (*)(void))(p + 64))();
	pthread_t t;
	pthread_create(&t, 0, writer, p);
	pthread_join(t, 0);
	return 0;
}
`

// TestWatchpoints watches writes and an execution in a -c command, also
// from a thread created after attaching.
func TestWatchpoints(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "watched", map[string]string{"watched.c": watchedProgram}, "-pthread")
	for _, tt := range []struct{ probe, want string }{
		{"watchpoint:0x10000000:1:w", "watchpoint:268435456:1:w tid=main\nwatchpoint:268435456:1:w tid=other\n"},
		{"w:0x10000040:1:x", "watchpoint:268435520:1:x tid=main\n"},
	} {
		r := harness.Gtrace(t, "-c", bin, "-e", tt.probe+` { printf("%s tid=%s\n", probe, tid == pid ? "main" : "other"); }`)
		if r.Code != 0 {
			if strings.Contains(r.Stderr, "perf_event_open breakpoint") {
				testutils.Skip(t, "this machine has no hardware breakpoints: "+r.Stderr)
			}
			t.Fatalf("%s: exit %d\n%s", tt.probe, r.Code, r.Stderr)
		}
		if got := strings.TrimRight(harness.StripAttaching(r.Stdout), "\n") + "\n"; got != tt.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.probe, got, tt.want)
		}
	}
}

// orderProgram calls f once, after the tracer has attached.
const orderProgram = `
#include <unistd.h>
__attribute__((noinline)) int f(int x) { return x + 1; }
int main(void) { usleep(300000); return f(1) == 2 ? 0 : 1; }
`

// TestProbeOrder checks that probes on one event run in the script's
// order, whichever order the kernel runs the programs of an event in.
func TestProbeOrder(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "order", map[string]string{"order.c": orderProgram})
	for _, kind := range []string{"uprobe", "uretprobe"} {
		var script strings.Builder
		for _, n := range []string{"1", "2", "3"} {
			script.WriteString(kind + ":" + bin + `:f { printf("` + n + `"); }` + "\n")
		}
		r := harness.Gtrace(t, "-c", bin, "-e", script.String())
		if got := strings.TrimSpace(harness.StripAttaching(r.Stdout)); r.Code != 0 || got != "123" {
			t.Errorf("%s: exit %d, got %q, want \"123\"\n%s", kind, r.Code, got, r.Stderr)
		}
	}
	// Each CPU runs the two in order, one CPU perhaps while another does.
	r := harness.Gtrace(t, "-e", `profile:ms:100 { printf("a"); } profile:ms:100 { printf("b\n"); exit(); }`)
	if got := harness.StripAttaching(r.Stdout); r.Code != 0 || !regexp.MustCompile(`^a+b\n`).MatchString(got) {
		t.Errorf("profile: exit %d, got %q, want a+b\n%s", r.Code, got, r.Stderr)
	}
}

// boundsProgram has a function of unknown size: an assembler label with
// no .size.
const boundsProgram = `
#include <unistd.h>
__asm__(".text\n.globl nosize\n.type nosize, @function\nnosize:\n\tret\n");
void nosize(void);
__attribute__((noinline)) int sized(int x) { return x * 3; }
int main(void) { usleep(300000); nosize(); return sized(2) == 6 ? 0 : 1; }
`

// TestUprobeBounds checks uprobes whose place is outside a function, or
// where gtrace cannot tell: refused when attaching as bpftrace refuses
// them, a function of unknown size allowed with --unsafe.
func TestUprobeBounds(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "bounds", map[string]string{"bounds.c": boundsProgram})
	for _, tt := range []struct{ probe, cause string }{
		{"uprobe:" + bin + ":nosize", "ERROR: Could not determine boundary for nosize (symbol has size 0).\n" +
			"Use --unsafe to force attachment. WARNING: This option could lead to data corruption in the target process.\n"},
		{"uprobe:" + bin + ":sized+100000", "ERROR: Offset outside the function bounds ('sized' size is "},
		{"uprobe:" + bin + ":10", "ERROR: Could not resolve address: " + bin + ":0xa\n"},
	} {
		r := harness.Gtrace(t, "-e", tt.probe+" { }")
		unable := "ERROR: Unable to attach probe: " + tt.probe + ". If this is expected"
		if r.Code != 1 || !strings.Contains(r.Stderr, unable) || !strings.Contains(r.Stderr, tt.cause) {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant 1, %q and %q", tt.probe, r.Code, r.Stderr, unable, tt.cause)
		}
	}
	r := harness.Gtrace(t, "--unsafe", "-c", bin, "-e", "uprobe:"+bin+`:nosize { printf("hit\n"); }`)
	if got := strings.TrimSpace(harness.StripAttaching(r.Stdout)); r.Code != 0 || got != "hit" {
		t.Errorf("--unsafe nosize: exit %d, got %q\n%s", r.Code, got, r.Stderr)
	}
}

// pidProgram has a usdt probe and a function, and runs until killed.
const pidProgram = `
#include <sys/sdt.h>
#include <unistd.h>
__attribute__((noinline)) int gtrace_pid_func(int x) { return x + 1; }
int main(void) {
	for (int i = 0;; i++) {
		DTRACE_PROBE1(gtprov, gtprobe, i);
		gtrace_pid_func(i);
		usleep(50000);
	}
}
`

// TestProbesByPid checks user-space probes of a -p process that name no
// binary, or a wildcard one: every file the process maps.
func TestProbesByPid(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "bypid", map[string]string{"bypid.c": pidProgram})
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	time.Sleep(100 * time.Millisecond) // let the loader map its libraries
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, probe := range []string{"usdt::gtprov:gtprobe", "usdt:*:gtprov:gtprobe", "usdt:::gtprobe", "uprobe:*:gtrace_pid_func"} {
		r := harness.Gtrace(t, "-p", pid, "-e", probe+` { printf("%s\n", probe); exit(); }`)
		got := strings.TrimSpace(harness.StripAttaching(r.Stdout))
		if r.Code != 0 || !strings.HasSuffix(got, bin+":gtprov:gtprobe") && !strings.HasSuffix(got, bin+":gtrace_pid_func") {
			t.Errorf("%s -p: exit %d, got %q\n%s", probe, r.Code, got, r.Stderr)
		}
	}
}

// TestSigintDropsQueuedSystem stops gtrace while system() commands
// flood in: as in bpftrace, those still queued are dropped, and END runs
// at once.
func TestSigintDropsQueuedSystem(t *testing.T) {
	testutils.RequireRoot(t)
	cmd := exec.Command(harness.Bin(), "--unsafe", "-e",
		`tracepoint:sched:sched_switch { system("echo foo"); } END { print("end"); }`)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.HasSuffix(strings.TrimRight(out.String(), "\n"), "\nend") {
			t.Errorf("exit %v, output ends %q, want end", err, lastOf(out.String(), 40))
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("gtrace still runs 5 s after SIGINT")
	}
}

// lastOf is the last n bytes of s.
func lastOf(s string, n int) string { return s[max(0, len(s)-n):] }

// flatRunner maps the file argv[1] executable and calls its start, over
// and over: code with no ELF headers, as a JIT writes.
const flatRunner = `
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) return 1;
	int (*f)(void) = (int (*)(void))mmap(0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if ((void *)f == MAP_FAILED) return 1;
	for (int i = 0; i < 40; i++) { f(); usleep(50000); }
	return 0;
}
`

// TestUprobeFlatBinary attaches at offset 0 of a file that is not ELF,
// which only --unsafe allows.
func TestUprobeFlatBinary(t *testing.T) {
	testutils.RequireRoot(t)
	runner := harness.BuildC(t, "flat", map[string]string{"flat.c": flatRunner})
	code := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(code, []byte{0x31, 0xc0, 0xc3}, 0o755); err != nil { // xor eax,eax; ret
		t.Fatal(err)
	}
	script := "uprobe:" + code + `:0x0 { printf("hit\n"); exit(); }`
	r := harness.Gtrace(t, "-e", script)
	if r.Code != 1 || !strings.Contains(r.Stderr, code+" is not an ELF file") {
		t.Errorf("without --unsafe: exit %d, stderr:\n%s\nwant 1, not an ELF file", r.Code, r.Stderr)
	}
	r = harness.Gtrace(t, "--unsafe", "-c", runner+" "+code, "-e", script)
	if got := strings.TrimSpace(harness.StripAttaching(r.Stdout)); r.Code != 0 || got != "hit" {
		t.Errorf("--unsafe: exit %d, got %q\n%s", r.Code, got, r.Stderr)
	}
}

// TestUprobeOtherMountNamespace attaches by -p to a binary at a path
// that only the process's mount namespace has, as in a container.
func TestUprobeOtherMountNamespace(t *testing.T) {
	testutils.RequireRoot(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		testutils.Skip(t, "unshare is not installed")
	}
	bin := harness.BuildC(t, "inns", map[string]string{"inns.c": pidProgram})
	private := t.TempDir() // empty here, bin's directory in the process's namespace
	cmd := exec.Command("unshare", "-m", "sh", "-c",
		`mount --bind "$1" "$2" && exec "$2/inns"`, "sh", filepath.Dir(bin), private)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	time.Sleep(200 * time.Millisecond)
	inside := filepath.Join(private, "inns")
	r := harness.Gtrace(t, "-p", strconv.Itoa(cmd.Process.Pid), "-e", "uprobe:"+inside+`:gtrace_pid_func { printf("hit\n"); exit(); }`)
	if got := strings.TrimSpace(harness.StripAttaching(r.Stdout)); r.Code != 0 || got != "hit" {
		t.Errorf("exit %d, got %q\n%s", r.Code, got, r.Stderr)
	}
}

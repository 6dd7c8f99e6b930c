package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"gtrace/bpfstat"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestTopOnce samples every BPF program with `gtrace top --once -f
// json` while a program traced by another gtrace runs: the uprobe's row
// counts exactly the calls the program makes, and the kernel's
// statistics setting is as it was afterwards.
func TestTopOnce(t *testing.T) {
	testutils.RequireRoot(t)
	harness.StatsSysctlKept(t, "gtrace top")
	bin := harness.BuildC(t, "topped", map[string]string{"topped.c": harness.LeafProgram}, "-O1")

	harness.StartTracing(t, "uprobe:"+bin+":leaf { @ = count(); }", io.Discard)

	top := exec.Command(harness.Bin(), "top", "--once", "-f", "json", "--interval", "3s", bin)
	var topOut strings.Builder
	top.Stdout = &topOut
	if err := top.Start(); err != nil {
		t.Fatal(err)
	}
	waitStatsOn(t, top.Process.Pid) // then run the workload
	if out, err := exec.Command(bin).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	if err := top.Wait(); err != nil {
		t.Fatalf("gtrace top: %v", err)
	}
	var rec struct {
		Type string
		Data []struct {
			Attach    []string
			Owners    []string
			Runs      uint64 `json:"run_cnt"`
			RunTimeNs uint64 `json:"run_time_ns"`
		}
	}
	if err := json.Unmarshal([]byte(topOut.String()), &rec); err != nil {
		t.Fatalf("%q: %v", topOut.String(), err)
	}
	if rec.Type != "programs" || len(rec.Data) != 1 {
		t.Fatalf("want one program attached to %s: %s", bin, topOut.String())
	}
	p := rec.Data[0]
	if p.Runs != 5 || p.RunTimeNs == 0 || len(p.Owners) == 0 || !strings.HasPrefix(p.Attach[0], "uprobe:"+bin) {
		t.Errorf("program %+v: want 5 runs of the uprobe on %s, with run time and an owner", p, bin)
	}
}

// waitStatsOn waits until process pid holds a BPF_ENABLE_STATS
// descriptor.
func waitStatsOn(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(bpfstat.StatsHolders(), pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not turn BPF statistics on within 10 s", pid)
		}
	}
}

// TestStatsHolders checks that a BPF_ENABLE_STATS descriptor, which the
// sysctl does not show, counts as statistics being on.
func TestStatsHolders(t *testing.T) {
	testutils.RequireRoot(t)
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(bpfstat.StatsHolders(), os.Getpid()) || !bpfstat.StatsOn() {
		t.Errorf("holding a BPF_ENABLE_STATS descriptor: holders %v, StatsOn %v", bpfstat.StatsHolders(), bpfstat.StatsOn())
	}
	stats.Close()
	if slices.Contains(bpfstat.StatsHolders(), os.Getpid()) {
		t.Errorf("closed the descriptor, still among the holders: %v", bpfstat.StatsHolders())
	}
}

// TestTopTracepoint samples a gtrace tracepoint script on a dd workload
// with `gtrace top --once -f json`. The probe fires on every read in the
// system, so its run count is exact only once it stops: the test holds
// the program, gtrace detaches and exits, and top samples after that.
// Its row must count exactly the hits the script counted, the workload's
// reads among them.
func TestTopTracepoint(t *testing.T) {
	testutils.RequireRoot(t)
	const reads, interval = 100, 4 * time.Second
	work := exec.Command("/bin/sh", "-c", "read x; exec "+harness.DD("bs=1 count="+strconv.Itoa(reads)))
	release, err := work.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	defer work.Process.Kill()

	top := exec.Command(harness.Bin(), "top", "--once", "-f", "json", "--interval", interval.String())
	var topOut strings.Builder
	top.Stdout = &topOut
	if err := top.Start(); err != nil {
		t.Fatal(err)
	}
	defer top.Process.Kill()
	waitStatsOn(t, top.Process.Pid)
	started := time.Now()

	var out strings.Builder
	tracer := harness.StartTracing(t, fmt.Sprintf(`tracepoint:syscalls:sys_enter_read {
	@hits = count();
	if (pid == %d && comm == "dd" && args.fd == 0) { @dd = count(); }
}`, work.Process.Pid), &out)
	id, err := strconv.ParseUint(tracerProgram(t, tracer.Process.Pid), 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	held, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	release.Close()
	if err := work.Wait(); err != nil {
		t.Fatalf("workload: %v", err)
	}
	tracer.Process.Signal(syscall.SIGINT)
	if err := tracer.Wait(); err != nil {
		t.Fatalf("gtrace: %v", err)
	}
	// Its program runs, returning at once, until the kernel has
	// detached it after gtrace's exit; then its count stays.
	harness.WaitDetached(t, ebpf.ProgramID(id), 2*time.Second)
	if d := time.Since(started); d > interval-time.Second {
		t.Fatalf("tracing took %v, too close to top's sample at %v", d, interval)
	}
	want := fmt.Sprintf("@dd: %d\n", reads)
	hits := regexp.MustCompile(`(?m)^@hits: (\d+)$`).FindStringSubmatch(out.String())
	if hits == nil || !strings.Contains(out.String(), want) {
		t.Fatalf("want @hits and %q in gtrace's output:\n%s", want, out.String())
	}

	if err := top.Wait(); err != nil {
		t.Fatalf("gtrace top: %v", err)
	}
	var rec struct {
		Data []bpfstat.Program
	}
	if err := json.Unmarshal([]byte(topOut.String()), &rec); err != nil {
		t.Fatalf("%q: %v", topOut.String(), err)
	}
	i := slices.IndexFunc(rec.Data, func(p bpfstat.Program) bool { return p.ID == uint32(id) })
	if i < 0 {
		t.Fatalf("program %d is not in gtrace top's output: %s", id, topOut.String())
	}
	p := rec.Data[i]
	kernel, err := held.Stats()
	if err != nil {
		t.Fatal(err)
	}
	owner := fmt.Sprintf("[%d]", os.Getpid())
	counted, _ := strconv.ParseUint(hits[1], 10, 64)
	if p.Runs != kernel.RunCount || p.Runs < counted || p.RunTimeNs == 0 || len(p.Owners) != 1 || !strings.HasSuffix(p.Owners[0], owner) {
		t.Errorf("program %+v: want the kernel's %d runs, at least the %d hits the script counted, with run time, held by this test only",
			p, kernel.RunCount, counted)
	}
}

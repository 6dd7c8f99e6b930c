package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"gtrace/bpfstat"
)

// TestTopOnce samples every BPF program with `gtrace top --once -f
// json` while a program traced by another gtrace runs: the uprobe's row
// counts exactly the calls the program makes, and the kernel's
// statistics setting is as it was afterwards.
func TestTopOnce(t *testing.T) {
	requireRoot(t)
	before, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildUstackC(t, "topped", ustackProgram, "-O1")

	startTracing(t, "uprobe:"+bin+":leaf { @ = count(); }")

	top := exec.Command(gtraceBin, "top", "--once", "-f", "json", "--interval", "3s", bin)
	var topOut strings.Builder
	top.Stdout = &topOut
	if err := top.Start(); err != nil {
		t.Fatal(err)
	}
	// Run the workload once top has statistics on.
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(bpfstat.StatsHolders(), top.Process.Pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gtrace top did not turn BPF statistics on within 10 s")
		}
	}
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

	after, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("bpf_stats_enabled was %q, is %q after gtrace top", before, after)
	}
}

// TestStatsHolders checks that a BPF_ENABLE_STATS descriptor, which the
// sysctl does not show, counts as statistics being on.
func TestStatsHolders(t *testing.T) {
	requireRoot(t)
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

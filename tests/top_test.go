package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
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
	time.Sleep(500 * time.Millisecond) // statistics on, within the interval
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

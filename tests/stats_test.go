package tests

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestStats runs a probe with --stats: its row counts at least the reads
// the workload made, in text and in JSON, and the kernel's statistics
// setting is as it was afterwards.
func TestStats(t *testing.T) {
	requireRoot(t)
	before, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled")
	if err != nil {
		t.Fatal(err)
	}
	const reads = 100
	script := readsFd0 + " { @ = count(); }"
	r := gtrace(t, "--stats", "-c", dd("bs=1 count="+strconv.Itoa(reads)), "-e", script)
	if r.code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
	}
	row := regexp.MustCompile(`(?m)^tracepoint:syscalls:sys_enter_read +(\d+) +(\d+) +(\d+) +(\d+)$`).FindStringSubmatch(r.stdout)
	if row == nil || !strings.Contains(r.stdout, "\nPROBE ") || !strings.HasSuffix(r.stdout, "lost events: 0\n") {
		t.Fatalf("no stats table in:\n%s", r.stdout)
	}
	if runs, _ := strconv.Atoi(row[1]); runs < reads {
		t.Errorf("%d runs, want at least the workload's %d reads", runs, reads)
	}
	if total, _ := strconv.Atoi(row[2]); total == 0 {
		t.Errorf("no run time accounted: %s", row[0])
	}

	r = gtrace(t, "--stats", "-f", "json", "-c", dd("bs=1 count="+strconv.Itoa(reads)), "-e", script)
	if r.code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var rec struct {
		Type string
		Data struct {
			Probes []struct {
				Probe   string
				Runs    uint64
				TotalNs uint64 `json:"total_ns"`
			}
			LostEvents uint64 `json:"lost_events"`
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if rec.Type != "stats" || len(rec.Data.Probes) != 1 || rec.Data.Probes[0].Runs < reads || rec.Data.Probes[0].TotalNs == 0 {
		t.Errorf("stats record %+v", rec)
	}

	after, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("bpf_stats_enabled was %q, is %q after --stats", before, after)
	}
}

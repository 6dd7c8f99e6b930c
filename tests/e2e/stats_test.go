package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestStats runs a probe with --stats on every read in the system: its
// row counts the runs exactly as the script counted its hits, in text
// and in JSON, among them the workload's reads; and the kernel's
// statistics setting is as it was afterwards.
func TestStats(t *testing.T) {
	testutils.RequireRoot(t)
	harness.StatsSysctlKept(t, "--stats")
	const reads = 100
	workload := harness.DD("bs=1 count=" + strconv.Itoa(reads))
	script := `tracepoint:syscalls:sys_enter_read { @hits = count(); if (pid == cpid && args.fd == 0) { @dd = count(); } }`
	hits := regexp.MustCompile(`(?m)^@hits: (\d+)$`)

	r := harness.Gtrace(t, "--stats", "-c", workload, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	row := regexp.MustCompile(`(?m)^tracepoint:syscalls:sys_enter_read +(\d+) +(\d+) +(\d+) +(\d+)$`).FindStringSubmatch(r.Stdout)
	counted := hits.FindStringSubmatch(r.Stdout)
	if row == nil || counted == nil || !strings.Contains(r.Stdout, "\nPROBE ") || !strings.HasSuffix(r.Stdout, "lost events: 0\n") {
		t.Fatalf("no @hits and stats table in:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, fmt.Sprintf("\n@dd: %d\n", reads)) {
		t.Errorf("want @dd: %d, the workload's reads, in:\n%s", reads, r.Stdout)
	}
	if row[1] != counted[1] {
		t.Errorf("%s runs, the script counted %s hits", row[1], counted[1])
	}
	if total, _ := strconv.Atoi(row[2]); total == 0 {
		t.Errorf("no run time accounted: %s", row[0])
	}

	r = harness.Gtrace(t, "--stats", "-f", "json", "-c", workload, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
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
	var hitsRec struct {
		Data struct {
			Hits uint64 `json:"@hits"`
		}
	}
	for _, l := range lines {
		if strings.Contains(l, `"@hits"`) {
			if err := json.Unmarshal([]byte(l), &hitsRec); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
		}
	}
	if rec.Type != "stats" || len(rec.Data.Probes) != 1 || rec.Data.Probes[0].Runs != hitsRec.Data.Hits ||
		rec.Data.Probes[0].Runs < reads || rec.Data.Probes[0].TotalNs == 0 {
		t.Errorf("stats record %+v, want the @hits the script counted, %d, as runs", rec, hitsRec.Data.Hits)
	}
}

package bpfstat

import (
	"testing"
	"time"
)

func TestDiffFilterSort(t *testing.T) {
	prev := []Program{{ID: 1, Name: "a", Runs: 10, RunTimeNs: 1000}, {ID: 2, Name: "b", Runs: 0}}
	cur := []Program{
		{ID: 1, Name: "a", Type: "Kprobe", Runs: 30, RunTimeNs: 3000, Owners: []string{"gtrace[7]"}},
		{ID: 2, Name: "b", Type: "TracePoint", Runs: 5, RunTimeNs: 5_000_000},
		{ID: 3, Name: "c", Type: "XDP"}, // new since the last sample
	}
	rows := diff(prev, cur, time.Second)
	want := []struct {
		runsPerSec, cpu float64
		avg             uint64
	}{{20, 0.0002, 100}, {5, 0.5, 1_000_000}, {0, 0, 0}}
	for i, w := range want {
		r := rows[i]
		if r.RunsPerSec != w.runsPerSec || r.AvgNs != w.avg || r.CPUPercent < w.cpu*0.999 || r.CPUPercent > w.cpu*1.001 {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
	sortRows(rows, "cpu")
	if rows[0].ID != 2 {
		t.Errorf("by cpu, first is %d, want 2", rows[0].ID)
	}
	sortRows(rows, "runs")
	if rows[0].ID != 1 {
		t.Errorf("by runs, first is %d, want 1", rows[0].ID)
	}
	if got := filter(rows, "gtrace[7]"); len(got) != 1 || got[0].ID != 1 {
		t.Errorf("filter by owner: %+v", got)
	}
	if got := filter(rows, "XDP"); len(got) != 1 || got[0].ID != 3 {
		t.Errorf("filter by type: %+v", got)
	}
}

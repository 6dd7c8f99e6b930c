package output

import (
	"strings"
	"testing"
)

func TestStatsFormats(t *testing.T) {
	stats := []ProbeStat{{"tracepoint:syscalls:sys_enter_read", 10, 1234, 2}, {"begin", 0, 0, 0}}
	var text, js strings.Builder
	if err := NewText(&text, &text).Stats(stats, 3); err != nil {
		t.Fatal(err)
	}
	want := "PROBE                                      RUNS       TOTAL_NS     AVG_NS   MISSED\n" +
		"tracepoint:syscalls:sys_enter_read           10           1234        123        2\n" +
		"begin                                         0              0          0        0\n" +
		"lost events: 3\n"
	if text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
	if err := NewJSON(&js).Stats(stats, 3); err != nil {
		t.Fatal(err)
	}
	wantJS := `{"type": "stats", "data": {"probes": [{"probe": "tracepoint:syscalls:sys_enter_read", "runs": 10, "total_ns": 1234, "avg_ns": 123, "missed": 2}, ` +
		`{"probe": "begin", "runs": 0, "total_ns": 0, "avg_ns": 0, "missed": 0}], "lost_events": 3}}` + "\n"
	if js.String() != wantJS {
		t.Errorf("json:\n%s\nwant:\n%s", js.String(), wantJS)
	}
}

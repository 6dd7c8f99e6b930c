package output

import (
	"bytes"
	"testing"
	"time"
)

func TestBenchResult(t *testing.T) {
	names := []string{"count", "a_benchmark_with_a_name_longer_than_forty_bytes"}
	var text, json bytes.Buffer
	tp, jp := NewText(&text, &text), NewJSON(&json)
	for i, mean := range []time.Duration{12, 3456} {
		if err := tp.BenchResult(names, i, mean, uint64(1000*(i+1))); err != nil {
			t.Fatal(err)
		}
		if err := jp.BenchResult(names, i, mean, uint64(1000*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	wantText := `Benchmark                                       Time(ns)       Iterations
-------------------------------------------------------------------------
count                                           12             1000
a_benchmark_with_a_name_longer_than_forty_bytes 3456           2000
`
	if text.String() != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), wantText)
	}
	wantJSON := `{"type": "benchmark_result", "data": {"count": {"average": 12, "iters": 1000}}}
{"type": "benchmark_result", "data": {"a_benchmark_with_a_name_longer_than_forty_bytes": {"average": 3456, "iters": 2000}}}
`
	if json.String() != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", json.String(), wantJSON)
	}
}

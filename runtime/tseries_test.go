package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"gtrace/compiler"
	"gtrace/internal/testutils"
	"gtrace/output"
	"gtrace/sema"
)

// runJSON compiles src with env as its environment, runs it and returns
// its JSON output.
func runJSON(t *testing.T, src string, env map[string]string) string {
	t.Helper()
	prog, err := compiler.Compile([]byte(src), &compiler.Options{Check: sema.Options{Env: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if _, err := Run(prog.Output, &Options{Printer: output.NewJSON(&stdout), Stderr: &stderr, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// TestTSeriesAggregations writes values at set times, through the map
// the tests may name as the clock, and reads each aggregation back.
func TestTSeriesAggregations(t *testing.T) {
	testutils.RequireRoot(t)
	// Intervals of 100ms from 1s: 3 then 5 in the first, -2 and 4 in
	// the second, none in the third, 6 in the fourth.
	const script = `BEGIN { @ts = (uint64)1s; @a = %[1]s(3%[2]s); @a = %[1]s(5%[2]s); @ts += 100ms;
		@a = %[1]s(-2%[2]s); @a = %[1]s(4%[2]s); @ts += 200ms; @a = %[1]s(6%[2]s); clear(@ts); }`
	tests := []struct {
		agg  string
		want [3]int
	}{
		{"", [3]int{5, 4, 6}},
		{`, "sum"`, [3]int{8, 2, 6}},
		{`, "avg"`, [3]int{4, 1, 6}},
		{`, "min"`, [3]int{3, -2, 6}},
		{`, "max"`, [3]int{5, 4, 6}},
	}
	for _, tt := range tests {
		t.Run(tt.agg, func(t *testing.T) {
			src := fmt.Sprintf(script, "tseries", ", 100ms, 5"+tt.agg)
			got := runJSON(t, src, map[string]string{sema.DummyTSMapEnv: "@ts"})
			want := fmt.Sprintf(`{"type": "tseries", "data": {"@a": [{"interval_start":"1970-01-01 00:00:01.000000000","value":%d},`+
				`{"interval_start":"1970-01-01 00:00:01.100000000","value":%d},`+
				`{"interval_start":"1970-01-01 00:00:01.300000000","value":%d}]}}`+"\n", tt.want[0], tt.want[1], tt.want[2])
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestTSeriesClock checks that intervals are timed by the TAI clock,
// which is the wall clock give or take the leap seconds.
func TestTSeriesClock(t *testing.T) {
	testutils.RequireRoot(t)
	got := runJSON(t, `BEGIN { @t["k"] = tseries(1, 1s, 3); }`, nil)
	var out struct {
		Data struct {
			T map[string][]struct {
				Start string `json:"interval_start"`
				Value int
			} `json:"@t"`
		}
	}
	if err := json.Unmarshal([]byte(got), &out); err != nil || len(out.Data.T["k"]) != 1 {
		t.Fatalf("output %q: %v", got, err)
	}
	start, err := time.Parse("2006-01-02 15:04:05.000000000", out.Data.T["k"][0].Start)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < -time.Minute || d > time.Minute {
		t.Errorf("interval starts at %v, %v from now", start, d)
	}
}

// TestTSeriesClearZero checks that clear() empties a tseries map and
// zero() leaves it without intervals.
func TestTSeriesClearZero(t *testing.T) {
	testutils.RequireRoot(t)
	if got := runJSON(t, `BEGIN { @[1] = tseries(1, 1ms, 5); clear(@); }`, nil); got != "" {
		t.Errorf("cleared: %q", got)
	}
	want := `{"type": "tseries", "data": {"@": []}}` + "\n"
	if got := runJSON(t, `BEGIN { @ = tseries(1, 1ms, 5, "avg"); zero(@); }`, nil); got != want {
		t.Errorf("zeroed: %q, want %q", got, want)
	}
}

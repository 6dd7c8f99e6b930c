package sema

import (
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

func TestTSeriesErrors(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{`BEGIN { @t = tseries(1, 1s, 5); }`, ""},
		{`BEGIN { @t[1] = tseries(1, 100ms, 5, "avg"); @t[2] = tseries(2, 100ms, 5, "avg"); }`, ""},
		{`BEGIN { @t = tseries($1, 1ms, 1); }`, ""},
		{`BEGIN { @t = tseries("s", 1s, 5); }`, "Expected an integer, got 'string[2]'"},
		{`BEGIN { $i = 1; @t = tseries(1, $i, 5); }`, "tseries: invalid interval_ns value (must be non-negative literal)"},
		{`BEGIN { $i = 1; @t = tseries(1, 1s, $i); }`, "tseries: invalid num_intervals value (must be non-negative literal)"},
		{`BEGIN { @t = tseries(1, 0, 5); }`, "tseries() interval_ns must be >= 1 (0 provided)"},
		{`BEGIN { @t = tseries(1, 1s, 0); }`, "tseries() num_intervals must be >= 1 (0 provided)"},
		{`BEGIN { @t = tseries(1, 1s, 1000001); }`, "tseries() num_intervals must be < 1000000 (1000001 provided)"},
		{`BEGIN { @t = tseries(1, 1s, 5, "median"); }`, `tseries() expects one of the following aggregation functions: avg, max, min, sum ("median" provided)`},
		{`BEGIN { $s = "avg"; @t = tseries(1, 1s, 5, $s); }`, "tseries() expects a string literal as its aggregation function"},
		{`BEGIN { @t = tseries(1, 1s); }`, "tseries() requires at least 3 arguments (2 provided)"},
		{`BEGIN { @t = tseries(1, 1s, 5); @t = tseries(1, 2s, 5); }`, "Different tseries bounds in a single map unsupported"},
		{`BEGIN { @t = tseries(1, 1s, 5, "min"); @t = tseries(1, 1s, 5); }`, "Different tseries bounds in a single map unsupported"},
		{`BEGIN { $x = tseries(1, 1s, 5); }`, "tseries() should be directly assigned to a map"},
		{`BEGIN { @t = tseries(1, 1s, 5); @u = @t; }`, "The value of @t, a tseries() aggregation, can only be printed"},
		{`BEGIN { @t[1] = tseries(1, 1s, 5); $n = len(@t); }`, "len() can not count the keys of @t, a tseries() map"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if _, got := check(t, tt.src, false); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTSeriesSigned checks that a map of signed and unsigned values is
// signed, and that tseries() keeps its parameters.
func TestTSeriesSigned(t *testing.T) {
	info, errs := check(t, `BEGIN { @t = tseries((uint64)1, 1s, 5, "max"); @t = tseries(-1, 1s, 5, "max"); }`, false)
	if errs != "" {
		t.Fatal(errs)
	}
	got := *info.Maps["@t"].Value.TSeries
	want := TSeries{Interval: 1e9, Intervals: 5, Agg: "max", Signed: true}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDummyTSMap(t *testing.T) {
	tests := []struct {
		src, env, want, err string
	}{
		{`BEGIN { @ts = (uint64)0; @t = tseries(1, 1s, 5); }`, "@ts", "@ts", ""},
		{`BEGIN { @t = tseries(1, 1s, 5); }`, "", "", ""},
		{`BEGIN { @ts = 0; @t = tseries(1, 1s, 5); }`, "@ts", "", "BPFTRACE_DUMMY_TS_MAP: @ts must be a scalar map of unsigned integers"},
		{`BEGIN { @ts[1] = (uint64)0; @t = tseries(1, 1s, 5); }`, "@ts", "", "BPFTRACE_DUMMY_TS_MAP: @ts must be a scalar map of unsigned integers"},
		{`BEGIN { @t = tseries(1, 1s, 5); }`, "@nope", "", "BPFTRACE_DUMMY_TS_MAP: map @nope not found"},
		{`BEGIN { @x = 1; }`, "@nope", "", ""}, // no tseries: not read
	}
	for _, tt := range tests {
		t.Run(tt.src+" "+tt.env, func(t *testing.T) {
			prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(tt.src)))
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			opts := fakeOptions(DefaultConfig())
			opts.Config.Unstable = map[string]string{"unstable_tseries": "enable"}
			opts.Env = func(key string) (string, bool) {
				return tt.env, key == DummyTSMapEnv && tt.env != ""
			}
			info, errs := Check(prog, opts)
			if got := errs.Err(); tt.err == "" && got != nil || tt.err != "" && (got == nil || got.Error() != tt.err) {
				t.Fatalf("errors %v, want %q", got, tt.err)
			}
			if info != nil && info.DummyTSMap != tt.want {
				t.Errorf("DummyTSMap = %q, want %q", info.DummyTSMap, tt.want)
			}
		})
	}
}

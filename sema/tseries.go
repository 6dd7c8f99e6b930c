package sema

import (
	"slices"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// TSeries holds the parameters of tseries(n, interval, intervals[, agg]):
// a map of such values keeps, per key, the value of n in each of the last
// Intervals intervals of Interval nanoseconds.
type TSeries struct {
	Interval  uint64
	Intervals uint64
	// Agg says how the values of one interval combine: "avg", "max",
	// "min" or "sum", or "" for the last one written.
	Agg    string
	Signed bool // n is signed
}

// tseriesAggs are the aggregations tseries() takes, in the order
// bpftrace lists them.
var tseriesAggs = []string{"avg", "max", "min", "sum"}

// maxIntervals bounds tseries()'s num_intervals, as in bpftrace.
const maxIntervals = 1000000

// DummyTSMapEnv names a scalar map of unsigned integers that tseries()
// reads its time from instead of the clock, as in bpftrace: tests set
// the time they want.
const DummyTSMapEnv = "BPFTRACE_DUMMY_TS_MAP"

// tseries checks tseries(n, interval_ns, num_intervals[, agg]) and
// returns the map value type it makes. The interval and the count are
// literals, and agg a string literal, with bpftrace's messages.
func (c *checker) tseries(call *ast.Call) *Type {
	args := call.Args
	ts := &TSeries{}
	t := &Type{Kind: Agg, Agg: AggTSeries, TSeries: ts}
	vt := c.expr(args[0])
	c.wantInt(args[0], vt)
	ts.Signed = vt.Kind == Int && vt.Signed
	for _, a := range args[1:] {
		c.expr(a)
	}
	interval, ok := c.constInt(args[1])
	if !ok {
		c.errorf(call, "tseries: invalid interval_ns value (must be non-negative literal)")
		return t
	}
	n, ok := c.constInt(args[2])
	if !ok {
		c.errorf(call, "tseries: invalid num_intervals value (must be non-negative literal)")
		return t
	}
	switch {
	case interval <= 0:
		c.errorf(call, "tseries() interval_ns must be >= 1 (%d provided)", interval)
		return t
	case n <= 0:
		c.errorf(call, "tseries() num_intervals must be >= 1 (%d provided)", n)
		return t
	case n > maxIntervals:
		c.errorf(call, "tseries() num_intervals must be < %d (%d provided)", maxIntervals, n)
		return t
	}
	ts.Interval, ts.Intervals = uint64(interval), uint64(n)
	if len(args) == 4 {
		s, ok := args[3].(*ast.StrLit)
		switch {
		case !ok:
			c.errorf(args[3], "tseries() expects a string literal as its aggregation function")
		case !slices.Contains(tseriesAggs, s.Value):
			c.errorf(call, "tseries() expects one of the following aggregation functions: %s (\"%s\" provided)",
				strings.Join(tseriesAggs, ", "), s.Value)
		default:
			ts.Agg = s.Value
		}
	}
	return t
}

// sameTSeries checks that a tseries() assigned by s to a map of
// tseries values old has its parameters, and returns the map's value
// type: signed if either is.
func (c *checker) sameTSeries(s *ast.AssignStmt, old, t *Type) *Type {
	a, b := old.TSeries, t.TSeries
	if a.Interval != b.Interval || a.Intervals != b.Intervals || a.Agg != b.Agg {
		c.errorf(s.RHS, "Different tseries bounds in a single map unsupported")
		return old
	}
	if a.Signed || !b.Signed {
		return old
	}
	return t
}

// checkDummyTSMap records the map that DummyTSMapEnv names, when the
// script has a tseries map: it must be a scalar map of unsigned
// integers.
func (c *checker) checkDummyTSMap() {
	if c.opts.Env == nil || !slices.ContainsFunc(c.info.MapNames, func(name string) bool {
		v := c.info.Maps[name].Value
		return v != nil && v.Agg == AggTSeries
	}) {
		return
	}
	name, ok := c.opts.Env(DummyTSMapEnv)
	if !ok {
		return
	}
	mi := c.info.Maps[name]
	switch {
	case mi == nil:
		c.errorAt(token.Span{Start: token.NoPos, End: token.NoPos}, "%s: map %s not found", DummyTSMapEnv, name)
	case mi.Key != nil || mi.Value == nil || mi.Value.Kind != Int || mi.Value.Signed:
		c.errorAt(token.Span{Start: token.NoPos, End: token.NoPos}, "%s: %s must be a scalar map of unsigned integers", DummyTSMapEnv, name)
	default:
		c.info.DummyTSMap = name
	}
}

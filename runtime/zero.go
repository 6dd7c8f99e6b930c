package runtime

import (
	"gtrace/codegen"
	"gtrace/output"
	"gtrace/sema"
)

// zeroEntry is the entry print() shows for a map without keys that has
// none (output.Map.Zero): the zero of its value type. Maps with keys,
// hist, lhist and tseries, and values other than integers, strings and
// tuples or records of them have none.
func (d *decoder) zeroEntry(l *codegen.MapLayout) *output.Entry {
	if l.Key != nil {
		return nil
	}
	v := l.Value
	switch {
	case v.Kind == sema.Agg:
	case plainValue(v):
		return &output.Entry{Value: d.value(v, make([]byte, l.ValueSize))}
	default:
		// A zero stack id or address would be looked up as if real.
		return nil
	}
	switch v.Agg {
	case sema.AggHist, sema.AggLHist, sema.AggTSeries:
		return nil
	case sema.AggCount:
		return &output.Entry{Value: output.Uint(0)}
	}
	// sum, min and max read as signed; avg and stats from Count and Total.
	return &output.Entry{Value: output.Int(0)}
}

// plainValue reports whether a zero value of t prints without a lookup:
// integers, bools, strings, and tuples and records of them.
func plainValue(t *sema.Type) bool {
	switch t.Kind {
	case sema.Int, sema.Bool, sema.String:
		return true
	case sema.Tuple:
		for _, e := range t.Elems {
			if !plainValue(e) {
				return false
			}
		}
		return true
	}
	return false
}

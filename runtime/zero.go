package runtime

import (
	"gtrace/codegen"
	"gtrace/output"
	"gtrace/sema"
)

// zeroEntry is the entry print() shows for a map without keys that has
// none (output.Map.Zero): the zero of its value type. Maps with keys,
// hist and lhist, and values other than integers and strings have none.
func (d *decoder) zeroEntry(l *codegen.MapLayout) *output.Entry {
	if l.Key != nil {
		return nil
	}
	v := l.Value
	switch v.Kind {
	case sema.Agg:
	case sema.Int, sema.Bool, sema.String:
		return &output.Entry{Value: d.value(v, make([]byte, l.ValueSize))}
	default:
		// A zero stack id or address would be looked up as if real.
		return nil
	}
	switch v.Agg {
	case sema.AggHist, sema.AggLHist:
		return nil
	case sema.AggCount:
		return &output.Entry{Value: output.Uint(0)}
	}
	// sum, min and max read as signed; avg and stats from Count and Total.
	return &output.Entry{Value: output.Int(0)}
}

package mapmerge

import (
	"errors"
	"fmt"

	"gtrace/output"
)

// PerNode returns the same map of several nodes as one map whose keys
// start with the name of the node, nodes[i] for maps[i]: @x becomes
// @x[node], @m[k] becomes @m[node, k]. Every kind can be shown this
// way, scalars and all tseries included; --per-node prints it.
func PerNode(nodes []string, maps []*output.Map) (*output.Map, error) {
	if len(nodes) != len(maps) {
		return nil, fmt.Errorf("per node: %d node names for %d maps", len(nodes), len(maps))
	}
	if len(maps) == 0 {
		return nil, errors.New("per node: no maps")
	}
	f := maps[0]
	m := &output.Map{
		Name: f.Name, Kind: f.Kind, HistBits: f.HistBits,
		LMin: f.LMin, LMax: f.LMax, LStep: f.LStep,
		Interval: f.Interval, Intervals: f.Intervals, TSeriesAgg: f.TSeriesAgg,
	}
	keyless := true
	for i, nm := range maps {
		if err := compatible(f, nm); err != nil {
			return nil, err
		}
		src := source(nm)
		for j := range src.Len() {
			e := src.Entry(j, true)
			keyless = keyless && len(e.Key) == 0
			e.Key = append([]output.Value{output.Str(nodes[i])}, e.Key...)
			m.Entries = append(m.Entries, e)
		}
	}
	if f.KeyNames != nil || keyless {
		// Key names stay unknown (nil) if they were, unless the node
		// is the only key part.
		m.KeyNames = append([]string{"node"}, f.KeyNames...)
	}
	return m, nil
}

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
	if f.KeyNames != nil || f.Zero != nil {
		// A map without keys has a Zero and no key names: its only
		// key part is now the node.
		m.KeyNames = append([]string{"node"}, f.KeyNames...)
	}
	for i, nm := range maps {
		if err := compatible(f, nm); err != nil {
			return nil, err
		}
		src := source(nm)
		for j := range src.Len() {
			e := src.Entry(j, true)
			e.Key = append([]output.Value{output.Str(nodes[i])}, e.Key...)
			m.Entries = append(m.Entries, e)
		}
	}
	return m, nil
}

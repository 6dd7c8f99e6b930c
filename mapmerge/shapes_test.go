package mapmerge

import (
	"fmt"

	"gtrace/output"
)

// A shape is a map as a node of a cluster would send it, for the
// benchmarks and the fleet simulation.
type shape struct {
	name string
	keys int // keys per node
	// node returns node n's map: its entries are worked out on demand,
	// so that a thousand nodes' maps need not all be in memory.
	node func(n int) *output.Map
}

// pidSpace is how many pids the nodes' keys are drawn from: nodes share
// some pids, as numbers, and not others.
const pidSpace = 40_000

var shapes = []shape{
	{name: "count-100keys", keys: 100, node: func(n int) *output.Map {
		// @[comm] = count(): a hundred commands, the same on every node.
		return &output.Map{Name: "@", Kind: output.Count, KeyNames: []string{"comm"},
			Source: fleetSource{n: n, keys: 100, entry: func(n, i int) output.Entry {
				return output.Entry{Key: commKeys[i], Value: output.Uint(uint64(1 + (n*7+i*13)%5000))}
			}}}
	}},
	{name: "count-10000keys", keys: 10_000, node: func(n int) *output.Map {
		// @[pid] = count(): ten thousand pids out of pidSpace.
		return &output.Map{Name: "@", Kind: output.Count, KeyNames: []string{"pid"},
			Source: fleetSource{n: n, keys: 10_000, entry: func(n, i int) output.Entry {
				pid := 1 + (i*7+n*13)%pidSpace
				return output.Entry{Key: pidKeys[pid], Value: output.Uint(uint64(1 + (n+i)%1000))}
			}}}
	}},
	{name: "hist-1key", keys: 1, node: func(n int) *output.Map {
		// @ = hist(latency in ns).
		return &output.Map{Name: "@", Kind: output.Hist,
			Source: fleetSource{n: n, keys: 1, entry: func(n, i int) output.Entry {
				return output.Entry{Buckets: latencyBuckets(n, i)}
			}}}
	}},
	{name: "hist-100keys", keys: 100, node: func(n int) *output.Map {
		// @[comm] = hist(latency in ns).
		return &output.Map{Name: "@", Kind: output.Hist, KeyNames: []string{"comm"},
			Source: fleetSource{n: n, keys: 100, entry: func(n, i int) output.Entry {
				return output.Entry{Key: commKeys[i], Buckets: latencyBuckets(n, i)}
			}}}
	}},
}

// The keys of the shapes, made once: a node's map made on demand then
// costs little next to merging it.
var commKeys, pidKeys = func() (comms, pids [][]output.Value) {
	for i := range 100 {
		comms = append(comms, []output.Value{output.Str(fmt.Sprintf("comm-%d", i))})
	}
	for pid := range pidSpace + 1 {
		pids = append(pids, []output.Value{output.Uint(uint64(pid))})
	}
	return comms, pids
}()

// latencyBuckets are hist(ns, 0) counts of latencies from 1µs to 1s:
// buckets 11 to 31, trailing zeros trimmed as the runtime does.
func latencyBuckets(n, i int) []uint64 {
	b := make([]uint64, 32)
	for j := 11; j < 32; j++ {
		b[j] = uint64((n*31 + i*17 + j*7) % 1000)
	}
	return b
}

// fleetSource is a node's map entries, made when asked for.
type fleetSource struct {
	n, keys int
	entry   func(n, i int) output.Entry
}

func (s fleetSource) Len() int { return s.keys }

func (s fleetSource) Entry(i int, key bool) output.Entry { return s.entry(s.n, i) }

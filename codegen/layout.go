package codegen

import (
	"gtrace/sema"
)

// Names of the maps every collection has.
const (
	mapEvents  = "events"  // ring buffer of printf, exit, print... events
	mapLost    = "lost"    // per-CPU count of events the ring buffer refused
	mapScratch = "scratch" // per-CPU scratch area, one entry per program
	mapGlobals = "globals" // values the runtime fills in before attaching
	mapStacks  = "stacks"  // kernel stacks by stack id
	mapFull    = "mapfull" // per-CPU count of updates refused per map
)

// Globals layout: the boot-clock time gtrace started, for elapsed.
const globalStartNs = 0

// MapLayout is how one script map is stored in BPF.
type MapLayout struct {
	Name    string // script name, such as "@x"
	BPFName string // map name in the collection
	Index   int    // slot in the mapfull counters
	Key     *sema.Type
	Value   *sema.Type
	KeySize int // bytes, including the bucket of hist and lhist maps
	// ValueSize is the size of one CPU's value for per-CPU maps.
	ValueSize int
	PerCPU    bool
}

func newMapLayout(mi *sema.MapInfo, bpfName string, index int) *MapLayout {
	l := &MapLayout{Name: mi.Name, BPFName: bpfName, Index: index, Key: mi.Key, Value: mi.Value, KeySize: 8}
	if mi.Key != nil {
		l.KeySize = align8(mi.Key.Size)
	}
	v := mi.Value
	switch {
	case v.Kind != sema.Agg:
		l.ValueSize = align8(v.Size)
	case v.Agg == sema.AggHist || v.Agg == sema.AggLHist:
		l.KeySize += 8 // the bucket index follows the key
		l.ValueSize = 8
		l.PerCPU = true
	case v.Agg == sema.AggCount || v.Agg == sema.AggSum:
		l.ValueSize = 8
		l.PerCPU = true
	default: // min, max: value and a set flag; avg, stats: count and total
		l.ValueSize = 16
		l.PerCPU = true
	}
	return l
}

func align8(n int) int { return (n + 7) &^ 7 }

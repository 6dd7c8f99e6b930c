package codegen

import (
	"unsafe"

	"github.com/cilium/ebpf"

	"gtrace/lang/ast"
	"gtrace/sema"
)

// Names of the maps every collection has.
const (
	mapEvents  = "events"  // ring buffer of printf, exit, print... events
	mapLost    = "lost"    // per-CPU count of events the ring buffer refused
	mapScratch = "scratch" // per-CPU scratch area, one entry per program
	mapGlobals = "globals" // values the runtime fills in before attaching
	mapFull    = "mapfull" // per-CPU count of updates refused per map
	mapStopped = "stopped" // per-CPU count of runs after the stop, per program
)

// Globals is the one value of the globals map, which the runtime writes.
type Globals struct {
	StartNs uint64 // the monotonic clock when tracing started, for elapsed
	Stopped uint64 // not 0 once tracing has ended: every probe returns at once
	// TaiOffset is CLOCK_TAI minus CLOCK_BOOTTIME, measured when tracing
	// started, for nsecs(sw_tai) on kernels whose BPF cannot read TAI.
	TaiOffset uint64
}

// Offsets in Globals, for the generated code.
const (
	globalStartNs = int16(unsafe.Offsetof(Globals{}.StartNs))
	globalStopped = uint32(unsafe.Offsetof(Globals{}.Stopped))
	globalTai     = int16(unsafe.Offsetof(Globals{}.TaiOffset))
	globalsSize   = uint32(unsafe.Sizeof(Globals{}))
)

// MapLayout is how one script map is stored in BPF.
type MapLayout struct {
	Name    string // script name, such as "@x"
	BPFName string // map name in the collection
	Index   int    // slot in the mapfull counters
	Key     *sema.Type
	Value   *sema.Type
	// KeyNames are sema.MapInfo's: the key's parts as written.
	KeyNames []string
	KeySize  int // bytes, including the bucket of hist and lhist maps
	// ValueSize is the size of one CPU's value for per-CPU maps.
	ValueSize int
	PerCPU    bool
	// Buckets, when not 0, says the map is a key-less hist or lhist kept
	// in a per-CPU array of that many buckets, indexed by bucket: an
	// array lookup costs a fraction of a hash lookup, and the JIT can
	// inline it. Its entries always exist, so reading it skips a map
	// whose buckets are all zero.
	Buckets int
	// Single says the map is a key-less count, sum, min, max, avg or
	// stats kept in a per-CPU array of one entry, for the same reason.
	// A map whose words are all zero on every CPU was never written (or
	// was cleared): count, avg and stats count their values, min and
	// max flag theirs, and the value ends in a mark word that sum()
	// sets, as its total may be zero, and zero() too, as a zeroed map
	// still prints.
	Single bool
}

func newMapLayout(mi *sema.MapInfo, bpfName string, index int, array bool) *MapLayout {
	l := &MapLayout{Name: mi.Name, BPFName: bpfName, Index: index, Key: mi.Key, Value: mi.Value, KeyNames: mi.KeyNames, KeySize: 8}
	if mi.Key != nil {
		l.KeySize = align8(mi.Key.Size)
	}
	v := mi.Value
	switch {
	case v.Kind != sema.Agg:
		l.ValueSize = align8(v.Size)
		return l
	case isHist(v):
		l.KeySize += 8 // the bucket index follows the key
		l.ValueSize = 8
	case v.Agg == sema.AggCount || v.Agg == sema.AggSum:
		l.ValueSize = 8
	case v.Agg == sema.AggTSeries:
		l.KeySize += 8 // the interval's slot follows the key
		l.ValueSize = tseriesValueSize
	default: // min, max: value and a set flag; avg, stats: count and total
		l.ValueSize = 16
	}
	l.PerCPU = true
	switch {
	case !array:
	case isHist(v):
		l.Buckets, l.KeySize = bucketCount(v), 4
	default:
		l.Single, l.KeySize = true, 4
		l.ValueSize += 8 // the mark
	}
	return l
}

func isHist(v *sema.Type) bool {
	return v.Kind == sema.Agg && (v.Agg == sema.AggHist || v.Agg == sema.AggLHist)
}

// bucketCount is how many buckets a hist or lhist value can fall in.
func bucketCount(v *sema.Type) int {
	if v.Agg == sema.AggLHist {
		return int((v.LMax-v.LMin)/v.LStep) + 2 // below min, each step, at or above max
	}
	// Bucket 0 holds negative values, the 2^k after it the small ones,
	// then 2^k for each power of two up to 2^62 (see histBucket).
	k := int(v.HistBits)
	return (64-k)<<k + 1
}

// arrayMaps lists the key-less aggregations that can live in a per-CPU
// array: those not declared with a map type of their own, not tseries
// (whose slots are keys: printing needs only those written), and that no
// delete() or for loop names, as an array's entries always exist and
// cannot be deleted (has_key() and len() refuse maps without keys). A
// hist or lhist
// must not be zeroed either: it has no mark, so zeroed it would read as
// a map never written, where a zeroed map still prints its name.
func arrayMaps(info *sema.Info) map[string]bool {
	out := map[string]bool{}
	for name, mi := range info.Maps {
		if mi.Key == nil && mi.Value.Kind == sema.Agg && mi.Value.Agg != sema.AggTSeries && mi.Kind == "" {
			out[name] = true
		}
	}
	for _, p := range info.Progs {
		ast.Inspect(p.Node, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ForStmt:
				if n.Map != nil {
					delete(out, n.Map.Name)
				}
			case *ast.Call:
				f := p.Funcs[n]
				switch f {
				case sema.FDelete, sema.FZero:
					for _, a := range n.Args {
						m, ok := a.(*ast.Map)
						if ok && (f != sema.FZero || isHist(info.Maps[m.Name].Value)) {
							delete(out, m.Name)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

func align8(n int) int { return (n + 7) &^ 7 }

// declaredMapTypes are the BPF map types of the kinds a map declaration
// names.
var declaredMapTypes = map[string]ebpf.MapType{
	sema.KindHash:          ebpf.Hash,
	sema.KindLRUHash:       ebpf.LRUHash,
	sema.KindPerCPUHash:    ebpf.PerCPUHash,
	sema.KindPerCPULRUHash: ebpf.LRUCPUHash,
}

// declaredSpec gives a declared map the type and size of its
// declaration.
func declaredSpec(spec *ebpf.MapSpec, mi *sema.MapInfo) {
	if mi.Kind == "" {
		return
	}
	spec.Type, spec.MaxEntries = declaredMapTypes[mi.Kind], uint32(mi.MaxEntries)
}

// Package mapmerge carries the maps of a gtrace program run on many
// machines and merges them into one, exactly: the kubectl plugin runs a
// program on every node of a cluster (`gtrace agent` on each), reads
// each node's maps in the wire format, and prints either one merged map
// (Merge, or Merger for one node at a time) or the maps of all nodes
// side by side (PerNode, for --per-node).
//
// # Wire format, version 1
//
// Encode writes one output.Map as one line of JSON; Decode reads it
// back into a map that prints byte for byte as the original did, in
// text and in JSON. The object's fields:
//
//	version      1
//	name         "@name"
//	kind         "scalar", "count", "sum", "min", "max", "avg", "stats",
//	             "hist", "lhist" or "tseries"
//	key_names    names of the key parts as the program wrote them, or null
//	hist_bits    k of hist(n, k)
//	lmin, lmax, lstep         lhist(n, min, max, step)
//	interval, intervals, tseries_agg
//	             tseries(n, interval in ns, intervals, agg); agg "" is
//	             the last value written
//	entries      the map's entries, in the order the runtime gave them
//	zero         the entry print() shows for a map without keys that has
//	             none (output.Map.Zero), or absent
//
// Fields that are zero may be left out. An entry holds the raw state of
// the aggregation, never a value computed for printing:
//
//	key      the key parts, each a typed value; absent for @x
//	value    the value of scalar, count, sum, min and max maps
//	count, total   both halves of avg and stats
//	buckets  every bucket count of hist and lhist, by bucket index
//	         (output.HistBucket, output.LHistBucket)
//	series   tseries points: {"epoch": n, "value": v}
//
// A typed value is an object with one field named after its type, as
// output.EncodeValue writes it: {"int": -1}, {"uint": 7}, {"bool": true},
// {"str": "bash"}, {"sym": "TASK_RUNNING", "n": 0} (also pointers),
// {"buf": "<base64>"}, {"tuple": [...]}, {"array": [...]},
// {"record": [{"name": "a", "value": {...}}]},
// {"stack": {"mode": 0, "frames": [{"addr": n, "sym": "...", "func":
// "...", "file": "...", "kernel": true}]}}; {} is none. Integers are
// JSON numbers of up to 64 bits and must be read as such, not as
// float64. Text that is not UTF-8 is {"base64": "..."} instead of a
// string, so that no byte is lost.
//
// Decode reads the forms of most maps (integer, boolean, symbol and
// plain string keys and values) with a scanner of its own, several
// times quicker than encoding/json, and everything else with
// encoding/json.
//
// # Merging
//
// Merge combines the same map read on several nodes, as if one machine
// had seen every event. Keys match by their typed value
// (output.AppendValueKey): Int 1 and Uint 1 are different keys.
//
//	count, sum      values add, wrapping at 64 bits as the BPF program does
//	min, max        the least or greatest value, compared as its type
//	avg, stats      counts add and totals add, so the average of the
//	                merged map is exact, not an average of averages
//	hist, lhist     bucket counts add, index by index; hist(n, k) must
//	                have the same k and lhist the same bounds everywhere
//	tseries         points of the same epoch add ("sum") or keep the
//	                extreme ("min", "max"): an epoch counts whole
//	                intervals since time 0, so it is the same interval on
//	                every node whose clock is in sync
//
// Scalar maps (@x = expr) and tseries of "avg" or of the last value
// written have no exact merge: an assigned value on two nodes has no
// sum, and those tseries do not keep the count or the time of their
// values. Merge refuses them with ErrNotMergeable, whatever the
// number of nodes, so that what prints depends on the program only;
// the caller prints them per node. Maps of one name but of different
// kinds or parameters are an error naming the map.
//
// The merged map lists its entries in the order of their typed keys,
// so that merging is independent of the order of the nodes and entries
// whose values tie print in key order.
//
// Merger adds one map at a time and keeps only the merged entries: the
// plugin decodes a node's map, adds it and drops it, and never holds
// every node's map at once. docs/fleet-scale.md has the costs at 1,000
// nodes.
package mapmerge

package metrics

import (
	"fmt"
	"strconv"
	"strings"

	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/lang/ast"
	"gtrace/sema"
)

// metricType is a metric family's type, as the exposition formats name it.
type metricType string

const (
	counter   metricType = "counter"
	gauge     metricType = "gauge"
	histogram metricType = "histogram"
	summary   metricType = "summary"
)

// family is how one map is exposed, worked out once from the script.
type family struct {
	mapName string // "@bytes"
	name    string // "gtrace_bytes"; a counter's samples add "_total"
	typ     metricType
	agg     sema.AggKind // NoAgg for a map of assigned integers
	help    string
	// labels name the key's parts: one per part of a tuple key, one per
	// field of a record key, one for any other key; nil for @x.
	labels []string
	record bool // the key is a record: labels are its fields
}

// plan holds the families of a script's maps, by map name.
type plan map[string]*family

// Prefix starts the name of every metric gtrace exposes.
const Prefix = "gtrace_"

// selfFamilies are the names of gtrace's own metrics, which no map may
// take.
var selfFamilies = []string{
	Prefix + "self_lost_events",
	Prefix + "self_map_updates_refused",
	Prefix + "self_map_series_dropped",
	Prefix + "self_probe_runs",
	Prefix + "self_probe_run_seconds",
	Prefix + "self_probe_missed",
}

// newPlan works out how each map of prog is exposed. Maps of values that
// are not integers (strings, stacks, tuples) and tseries maps are left
// out. It fails when two metric names would collide.
func newPlan(prog *compiler.Program) (plan, error) {
	negative, reset := sumUses(prog.Info)
	p := plan{}
	// Every sample name in use, with what uses it, for collisions.
	taken := map[string]string{}
	for _, name := range selfFamilies {
		for _, s := range sampleNames(name, counter) {
			taken[s] = "gtrace's own " + name
		}
	}
	for _, l := range prog.Output.SortedMaps() {
		f := newFamily(l, negative[l.Name] || reset[l.Name])
		if f == nil {
			continue
		}
		names := sampleNames(f.name, f.typ)
		if f.typ != gauge {
			names = append(names, f.name)
		}
		for _, s := range names {
			if other, ok := taken[s]; ok {
				return nil, fmt.Errorf("map %s: its metric %s collides with %s: rename the map", l.Name, s, other)
			}
			taken[s] = "map " + l.Name
		}
		p[l.Name] = f
	}
	return p, nil
}

// newFamily describes map l, nil if it is not exposed. mayDecrease says
// that a sum() map can go down.
func newFamily(l *codegen.MapLayout, mayDecrease bool) *family {
	f := &family{mapName: l.Name, name: metricName(l.Name)}
	v := l.Value
	switch {
	case v.Kind == sema.Agg:
		f.agg = v.Agg
		switch v.Agg {
		case sema.AggCount:
			f.typ = counter
		case sema.AggSum:
			f.typ = counter
			if mayDecrease {
				f.typ = gauge
			}
		case sema.AggMin, sema.AggMax, sema.AggAvg:
			f.typ = gauge
		case sema.AggStats:
			f.typ = summary
		case sema.AggHist, sema.AggLHist:
			f.typ = histogram
		default: // tseries: a series of intervals, not one value
			return nil
		}
		f.help = fmt.Sprintf("%s() map %s of the script", v.Agg, l.Name)
	case v.Kind == sema.Int:
		f.typ = gauge
		f.help = fmt.Sprintf("integer map %s of the script", l.Name)
	default:
		return nil
	}
	if f.typ == counter {
		// A counter's family name must not end in _total: its
		// samples add it.
		f.name = strings.TrimSuffix(f.name, "_total")
	}
	f.labels, f.record = labelNames(l)
	return f
}

// sampleNames lists the names of the samples of a family of type typ.
func sampleNames(name string, typ metricType) []string {
	switch typ {
	case counter:
		return []string{name + "_total", name + "_created"}
	case histogram:
		return []string{name + "_bucket", name + "_count", name + "_sum", name + "_created"}
	case summary:
		return []string{name + "_count", name + "_sum", name + "_created"}
	}
	return []string{name}
}

// metricName is a map's metric name: Prefix and the name without its @,
// "gtrace_map" for @ alone. Map names are identifiers, so they need no
// other change.
func metricName(mapName string) string {
	name := strings.TrimPrefix(mapName, "@")
	if name == "" {
		name = "map"
	}
	return sanitize(Prefix + name)
}

// sanitize replaces what a metric or label name cannot hold with _.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// labelNames names the labels of map l's key parts: a record key's
// field names; else, for each part, the builtin or variable it was
// (comm, pid, $fd as fd); else key0, key1, ... by position. A name that
// is not a valid label name, is reserved (le, quantile, __*) or taken
// falls back to its position's name.
func labelNames(l *codegen.MapLayout) (names []string, record bool) {
	k := l.Key
	var written []string
	switch {
	case k == nil:
		return nil, false
	case k.Kind == sema.Tuple && k.Names != nil:
		written, record = k.Names, true
	case k.Kind == sema.Tuple:
		written = make([]string, len(k.Elems))
	default:
		written = make([]string, 1)
	}
	if !record {
		copy(written, l.KeyNames)
	}
	taken := map[string]bool{}
	names = make([]string, len(written))
	for i, w := range written {
		name := strings.TrimPrefix(w, "$")
		if name == "" || name != sanitize(name) || name == "le" || name == "quantile" || strings.HasPrefix(name, "__") || taken[name] {
			name = "key" + strconv.Itoa(i)
		}
		for taken[name] {
			name += "_"
		}
		taken[name] = true
		names[i] = name
	}
	return names, record
}

// sumUses finds, in the whole script, the sum() maps that may take a
// negative value (a signed argument other than a non-negative literal)
// and the maps that clear(), zero() or delete() reset.
func sumUses(info *sema.Info) (negative, reset map[string]bool) {
	negative, reset = map[string]bool{}, map[string]bool{}
	for _, prog := range info.Progs {
		ast.Inspect(prog.Node, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				m, ok := n.LHS.(*ast.Map)
				call, isCall := n.RHS.(*ast.Call)
				if ok && isCall && prog.Funcs[call] == sema.FSum && len(call.Args) == 1 {
					if t := prog.Types[call.Args[0]]; t == nil || t.Signed && !t.Flex {
						negative[m.Name] = true
					}
				}
			case *ast.Call:
				switch prog.Funcs[n] {
				case sema.FClear, sema.FZero, sema.FDelete:
					if len(n.Args) > 0 {
						if m, ok := n.Args[0].(*ast.Map); ok {
							reset[m.Name] = true
						}
					}
				}
			}
			return true
		})
	}
	return negative, reset
}

package metrics

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gtrace/compiler"
	"gtrace/output"
	"gtrace/runtime"
	"gtrace/sema"
)

// Format is an exposition format.
type Format int

const (
	// OpenMetrics is the OpenMetrics 1.0 text format.
	OpenMetrics Format = iota
	// Text is Prometheus' classic text format, version 0.0.4.
	Text
)

// ContentType is the HTTP content type of format f.
func (f Format) ContentType() string {
	if f == OpenMetrics {
		return "application/openmetrics-text; version=1.0.0; charset=utf-8"
	}
	return "text/plain; version=0.0.4; charset=utf-8"
}

// DefaultMaxSeries is the default limit of series per map.
const DefaultMaxSeries = 10000

// Exporter writes snapshots of a script's maps in an exposition format.
type Exporter struct {
	plan      plan
	maxSeries int
	warnings  io.Writer

	mu     sync.Mutex
	warned map[string]bool // maps whose series were cut, warned of once
}

// NewExporter prepares the exposition of prog's maps, each cut to
// maxSeries keys (0 for DefaultMaxSeries); the first time a map is cut,
// it says so on warnings.
func NewExporter(prog *compiler.Program, maxSeries int, warnings io.Writer) (*Exporter, error) {
	p, err := newPlan(prog)
	if err != nil {
		return nil, err
	}
	if maxSeries <= 0 {
		maxSeries = DefaultMaxSeries
	}
	return &Exporter{plan: p, maxSeries: maxSeries, warnings: warnings, warned: map[string]bool{}}, nil
}

// Write writes snap in format f.
func (e *Exporter) Write(w io.Writer, snap *runtime.Snapshot, f Format) error {
	b := &writer{format: f}
	dropped := map[string]int{}
	for _, m := range snap.Maps {
		fam := e.plan[m.Name]
		if fam == nil {
			continue
		}
		series := fam.series(m)
		if len(series) > e.maxSeries {
			dropped[m.Name] = len(series) - e.maxSeries
			e.warnOnce(m.Name, len(series))
			series = series[:e.maxSeries]
		}
		b.family(fam.name, fam.typ, fam.help)
		for _, s := range series {
			fam.writeSeries(b, m, s)
		}
	}
	writeSelf(b, snap, dropped)
	if f == OpenMetrics {
		b.WriteString("# EOF\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// warnOnce warns, the first time only, that map name's n series were
// cut to the limit.
func (e *Exporter) warnOnce(name string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.warned[name] {
		return
	}
	e.warned[name] = true
	fmt.Fprintf(e.warnings, "WARNING: map %s has %d keys, more than the %d series a map may have in /metrics "+
		"(--metrics-max-series): the others are left out, counted by %sself_map_series_dropped\n", name, n, e.maxSeries, Prefix)
}

// aSeries is one entry of a map with its labels, in exposition syntax.
type aSeries struct {
	labels string // `comm="dd",pid="1"`, "" for none
	entry  output.Entry
}

// series lists m's entries with their labels, sorted by them, so that the
// series kept under the limit are the same from one scrape to the next.
func (f *family) series(m *output.Map) []*aSeries {
	entries := m.Entries
	if len(entries) == 0 && m.Zero != nil && f.typ != histogram {
		entries = []output.Entry{*m.Zero}
	}
	series := make([]*aSeries, 0, len(entries))
	for _, e := range entries {
		series = append(series, &aSeries{labels: f.labelText(e.Key), entry: e})
	}
	slices.SortFunc(series, func(a, b *aSeries) int { return strings.Compare(a.labels, b.labels) })
	return series
}

// labelText renders a key's labels, `name="value",...`.
func (f *family) labelText(key []output.Value) string {
	values := key
	if f.record && len(key) == 1 {
		values = nil
		for _, field := range key[0].Fields() {
			values = append(values, field.Value)
		}
	}
	var b strings.Builder
	for i, name := range f.labels {
		if i >= len(values) {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name + `="` + escapeLabel(output.KeyText(values[i])) + `"`)
	}
	return b.String()
}

// writeSeries writes the samples of one entry of map m.
func (f *family) writeSeries(b *writer, m *output.Map, s *aSeries) {
	e := s.entry
	switch f.typ {
	case counter, gauge:
		var v string
		switch f.agg {
		case sema.AggAvg:
			v = strconv.FormatInt(avg(e), 10)
		default:
			if _, ok := e.Value.Integer(); !ok {
				return // an enum or a pointer
			}
			v = e.Value.String()
		}
		name := f.name
		if f.typ == counter {
			name += "_total"
		}
		b.sample(name, s.labels, v)
	case summary:
		b.sample(f.name+"_count", s.labels, strconv.FormatInt(e.Count, 10))
		b.sample(f.name+"_sum", s.labels, strconv.FormatInt(e.Total, 10))
	case histogram:
		f.writeBuckets(b, m, s)
	}
}

func avg(e output.Entry) int64 {
	if e.Count == 0 {
		return 0
	}
	return e.Total / e.Count
}

// writeBuckets writes a hist or lhist entry as cumulative buckets, each
// le the largest integer its bucket holds, then +Inf. An lhist has all
// its buckets; a hist those up to the highest one in use in any entry of
// the map, as the 1,889 buckets of hist(n, 5) would be too many. The
// values' sum is unknown, so there is no _sum, and so, in OpenMetrics, no
// _count: the +Inf bucket is the count.
func (f *family) writeBuckets(b *writer, m *output.Map, s *aSeries) {
	bucket := func(i int) uint64 {
		if i < len(s.entry.Buckets) {
			return s.entry.Buckets[i]
		}
		return 0
	}
	prefix := s.labels
	if prefix != "" {
		prefix += ","
	}
	var finite int // buckets with a finite le; the rest go to +Inf
	var le func(i int) string
	if f.agg == sema.AggLHist {
		finite = 1 + int((m.LMax-m.LMin)/m.LStep)
		le = func(i int) string { return strconv.FormatInt(m.LMin+int64(i)*m.LStep-1, 10) }
	} else {
		finite = usedBuckets(m)
		le = func(i int) string {
			if i == 0 {
				return "-1" // bucket 0 holds the negative values
			}
			return formatUpper(output.HistUpper(i, m.HistBits) - 1)
		}
	}
	var total uint64
	for i := 0; i < finite; i++ {
		total += bucket(i)
		b.sample(f.name+"_bucket", prefix+`le="`+le(i)+`"`, strconv.FormatUint(total, 10))
	}
	for i := finite; i < len(s.entry.Buckets); i++ {
		total += bucket(i)
	}
	b.sample(f.name+"_bucket", prefix+`le="+Inf"`, strconv.FormatUint(total, 10))
	if b.format == Text {
		b.sample(f.name+"_count", s.labels, strconv.FormatUint(total, 10))
	}
}

// usedBuckets is the number of hist buckets up to the highest one that
// any entry of m has counts in.
func usedBuckets(m *output.Map) int {
	n := 0
	for _, e := range m.Entries {
		for i := len(e.Buckets) - 1; i >= n; i-- {
			if e.Buckets[i] > 0 {
				n = i + 1
				break
			}
		}
	}
	return n
}

// formatUpper writes a bucket bound exactly where a float64 holds it, as
// Prometheus reads le as a float64.
func formatUpper(n uint64) string {
	if n < 1<<53 {
		return strconv.FormatUint(n, 10)
	}
	return strconv.FormatFloat(float64(n), 'g', -1, 64)
}

// writeSelf writes gtrace's own metrics: events lost, updates refused by
// full maps, series left out by the limit and, with --stats, each
// probe's runs and run time.
func writeSelf(b *writer, snap *runtime.Snapshot, dropped map[string]int) {
	b.family(Prefix+"self_lost_events", counter, "events the ring buffer refused because it was full")
	b.sample(Prefix+"self_lost_events_total", "", strconv.FormatUint(snap.Lost, 10))
	b.family(Prefix+"self_map_updates_refused", counter, "map updates the kernel refused because the map was full")
	for _, m := range snap.Maps {
		b.sample(Prefix+"self_map_updates_refused_total", mapLabel(m.Name), strconv.FormatUint(snap.MapFull[m.Name], 10))
	}
	b.family(Prefix+"self_map_series_dropped", gauge, "keys of the map left out of this exposition by --metrics-max-series")
	for _, m := range snap.Maps {
		b.sample(Prefix+"self_map_series_dropped", mapLabel(m.Name), strconv.Itoa(dropped[m.Name]))
	}
	if snap.Probes == nil {
		return
	}
	// Probes of the same name add up: their label sets must differ.
	var names []string
	byName := map[string]*output.ProbeStat{}
	for _, p := range snap.Probes {
		if s, ok := byName[p.Probe]; ok {
			s.Runs, s.TotalNs, s.Missed = s.Runs+p.Runs, s.TotalNs+p.TotalNs, s.Missed+p.Missed
			continue
		}
		p := p
		byName[p.Probe] = &p
		names = append(names, p.Probe)
	}
	b.family(Prefix+"self_probe_runs", counter, "runs of the probe's program, by the kernel's accounting")
	for _, n := range names {
		b.sample(Prefix+"self_probe_runs_total", probeLabel(n), strconv.FormatUint(byName[n].Runs, 10))
	}
	b.family(Prefix+"self_probe_run_seconds", counter, "run time of the probe's program, by the kernel's accounting")
	for _, n := range names {
		b.sample(Prefix+"self_probe_run_seconds_total", probeLabel(n), strconv.FormatFloat(float64(byName[n].TotalNs)/1e9, 'g', -1, 64))
	}
	b.family(Prefix+"self_probe_missed", counter, "hits that did not run the probe's program: recursion, kprobe misses")
	for _, n := range names {
		b.sample(Prefix+"self_probe_missed_total", probeLabel(n), strconv.FormatUint(byName[n].Missed, 10))
	}
}

func mapLabel(name string) string { return `map="` + escapeLabel(name) + `"` }

func probeLabel(name string) string { return `probe="` + escapeLabel(name) + `"` }

// writer builds an exposition.
type writer struct {
	strings.Builder
	format Format
}

// family starts a metric family. In OpenMetrics a counter family is
// named without its samples' _total; in the classic format, with it.
func (b *writer) family(name string, typ metricType, help string) {
	if typ == counter && b.format == Text {
		name += "_total"
	}
	b.WriteString("# HELP " + name + " " + escapeHelp(help) + "\n")
	b.WriteString("# TYPE " + name + " " + string(typ) + "\n")
}

// sample writes one sample line.
func (b *writer) sample(name, labels, value string) {
	b.WriteString(name)
	if labels != "" {
		b.WriteString("{" + labels + "}")
	}
	b.WriteString(" " + value + "\n")
}

// escapeLabel escapes a label value: backslash, double quote and line
// feed, the same in both formats.
func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// escapeHelp escapes HELP text: backslash and line feed.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

package mapmerge

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"gtrace/output"
)

// Version is the version of the wire format Encode writes and Decode reads.
const Version = 1

// wireMap is a map on the wire; see doc.go.
type wireMap struct {
	Version    int         `json:"version"`
	Name       string      `json:"name"`
	Kind       string      `json:"kind"`
	KeyNames   []string    `json:"key_names"`
	HistBits   int         `json:"hist_bits,omitempty"`
	LMin       int64       `json:"lmin,omitempty"`
	LMax       int64       `json:"lmax,omitempty"`
	LStep      int64       `json:"lstep,omitempty"`
	Interval   uint64      `json:"interval,omitempty"`
	Intervals  uint64      `json:"intervals,omitempty"`
	TSeriesAgg string      `json:"tseries_agg,omitempty"`
	Entries    []wireEntry `json:"entries"`
	Zero       *wireEntry  `json:"zero,omitempty"`
}

type wireEntry struct {
	Key     []output.WireValue `json:"key,omitempty"`
	Value   *output.WireValue  `json:"value,omitempty"`
	Count   int64              `json:"count,omitempty"`
	Total   int64              `json:"total,omitempty"`
	Buckets []uint64           `json:"buckets,omitempty"`
	Series  []wirePoint        `json:"series,omitempty"`
}

type wirePoint struct {
	Epoch uint64           `json:"epoch"`
	Value output.WireValue `json:"value"`
}

// kindNames are the names of the kinds on the wire, by output.Kind.
var kindNames = []string{
	output.Scalar: "scalar", output.Count: "count", output.Sum: "sum", output.Min: "min",
	output.Max: "max", output.Avg: "avg", output.Stats: "stats", output.Hist: "hist",
	output.LHist: "lhist", output.TSeries: "tseries",
}

func kindName(k output.Kind) string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}

// Encode returns m in the wire format: one line of JSON.
func Encode(m *output.Map) ([]byte, error) {
	if int(m.Kind) >= len(kindNames) {
		return nil, fmt.Errorf("encode %s: unknown kind %d", m.Name, m.Kind)
	}
	// Names are identifiers; KeyNames may also hold "$x" or "".
	for _, s := range append([]string{m.Name}, m.KeyNames...) {
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("encode %q: name is not UTF-8", m.Name)
		}
	}
	w := wireMap{
		Version: Version, Name: m.Name, Kind: kindNames[m.Kind], KeyNames: m.KeyNames,
		HistBits: m.HistBits, LMin: m.LMin, LMax: m.LMax, LStep: m.LStep,
		Interval: m.Interval, Intervals: m.Intervals, TSeriesAgg: m.TSeriesAgg,
	}
	src := source(m)
	w.Entries = make([]wireEntry, src.Len())
	for i := range w.Entries {
		w.Entries[i] = encodeEntry(src.Entry(i, true))
	}
	if m.Zero != nil {
		z := encodeEntry(*m.Zero)
		w.Zero = &z
	}
	data, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Name, err)
	}
	return append(data, '\n'), nil
}

// source is where the entries of m are.
func source(m *output.Map) output.Source {
	if m.Source != nil {
		return m.Source
	}
	return entrySource(m.Entries)
}

type entrySource []output.Entry

func (es entrySource) Len() int { return len(es) }

func (es entrySource) Entry(i int, key bool) output.Entry { return es[i] }

func encodeEntry(e output.Entry) wireEntry {
	w := wireEntry{Count: e.Count, Total: e.Total, Buckets: e.Buckets}
	if len(e.Key) > 0 {
		w.Key = make([]output.WireValue, len(e.Key))
		for i, k := range e.Key {
			w.Key[i] = output.EncodeValue(k)
		}
	}
	if v := output.EncodeValue(e.Value); v != (output.WireValue{}) {
		w.Value = &v // else none, as in hist, avg and tseries entries
	}
	if len(e.Series) > 0 {
		w.Series = make([]wirePoint, len(e.Series))
		for i, p := range e.Series {
			w.Series[i] = wirePoint{Epoch: p.Epoch, Value: output.EncodeValue(p.Value)}
		}
	}
	return w
}

// Decode reads a map that Encode wrote.
func Decode(data []byte) (*output.Map, error) {
	if m, ok := decodeFast(data); ok {
		return m, nil
	}
	return decodeJSON(data)
}

// decodeJSON reads a map with encoding/json: any form of the wire
// format, and the reference for decodeFast.
func decodeJSON(data []byte) (*output.Map, error) {
	var w wireMap
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decode map: %w", err)
	}
	m, err := w.toMap()
	if err != nil {
		return nil, fmt.Errorf("decode map %s: %w", w.Name, err)
	}
	return m, nil
}

func (w *wireMap) toMap() (*output.Map, error) {
	if w.Version != Version {
		return nil, fmt.Errorf("wire format version %d, want %d", w.Version, Version)
	}
	kind := -1
	for k, name := range kindNames {
		if name == w.Kind {
			kind = k
		}
	}
	if kind < 0 {
		return nil, fmt.Errorf("unknown kind %q", w.Kind)
	}
	m := &output.Map{
		Name: w.Name, Kind: output.Kind(kind), KeyNames: w.KeyNames,
		HistBits: w.HistBits, LMin: w.LMin, LMax: w.LMax, LStep: w.LStep,
		Interval: w.Interval, Intervals: w.Intervals, TSeriesAgg: w.TSeriesAgg,
	}
	if err := checkParams(m); err != nil {
		return nil, err
	}
	if len(w.Entries) > 0 {
		m.Entries = make([]output.Entry, len(w.Entries))
	}
	for i, we := range w.Entries {
		var err error
		if m.Entries[i], err = we.toEntry(m); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	if w.Zero != nil {
		z, err := w.Zero.toEntry(m)
		if err != nil {
			return nil, fmt.Errorf("zero entry: %w", err)
		}
		m.Zero = &z
	}
	return m, nil
}

// checkParams rejects histogram and tseries parameters the printer
// cannot use: they would crash it or print nonsense.
func checkParams(m *output.Map) error {
	switch m.Kind {
	case output.Hist:
		if m.HistBits < 0 || m.HistBits > 5 {
			return fmt.Errorf("hist bits %d out of 0..5", m.HistBits)
		}
	case output.LHist:
		if m.LStep <= 0 || m.LMax <= m.LMin {
			return fmt.Errorf("lhist bounds min %d, max %d, step %d: want min < max and step > 0", m.LMin, m.LMax, m.LStep)
		}
	case output.TSeries:
		if m.Interval == 0 || m.Intervals == 0 {
			return errors.New("tseries interval and intervals must be above 0")
		}
	}
	return nil
}

// maxBuckets bounds the buckets of a hist or lhist entry.
func maxBuckets(m *output.Map) int {
	if m.Kind == output.Hist {
		return (64-m.HistBits)<<m.HistBits + 1
	}
	return int(2 + (m.LMax-m.LMin)/m.LStep)
}

func (w *wireEntry) toEntry(m *output.Map) (output.Entry, error) {
	e := output.Entry{Count: w.Count, Total: w.Total, Buckets: w.Buckets}
	if (m.Kind == output.Hist || m.Kind == output.LHist) && len(w.Buckets) > maxBuckets(m) {
		return e, fmt.Errorf("%d buckets, more than the %d a %s has", len(w.Buckets), maxBuckets(m), kindName(m.Kind))
	}
	if len(w.Key) > 0 {
		e.Key = make([]output.Value, len(w.Key))
		for i, k := range w.Key {
			var err error
			if e.Key[i], err = output.DecodeValue(k); err != nil {
				return e, fmt.Errorf("key: %w", err)
			}
		}
	}
	if w.Value != nil {
		var err error
		if e.Value, err = output.DecodeValue(*w.Value); err != nil {
			return e, fmt.Errorf("value: %w", err)
		}
	}
	if len(w.Series) > 0 {
		e.Series = make([]output.Point, len(w.Series))
		for i, p := range w.Series {
			v, err := output.DecodeValue(p.Value)
			if err != nil {
				return e, fmt.Errorf("series: %w", err)
			}
			e.Series[i] = output.Point{Epoch: p.Epoch, Value: v}
		}
	}
	return e, nil
}

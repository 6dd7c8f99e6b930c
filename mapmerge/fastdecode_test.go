package mapmerge

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"gtrace/output"
)

// fastCases are maps decodeFast must read, as encoding/json does.
func fastCases() []*output.Map {
	maps := sampleMaps()
	for _, s := range shapes {
		maps = append(maps, s.node(3))
	}
	rnd := rand.New(rand.NewPCG(3, 5))
	for _, proto := range []*output.Map{
		{Name: "@sum", Kind: output.Sum}, {Name: "@stats", Kind: output.Stats},
		{Name: "@hist", Kind: output.Hist, HistBits: 3}, {Name: "@l", Kind: output.LHist, LMin: -10, LMax: 90, LStep: 7},
		{Name: "@t", Kind: output.TSeries, Interval: 1e6, Intervals: 3, TSeriesAgg: "max"},
	} {
		var events []event
		for range 300 {
			events = append(events, event{
				key:   key(output.Str(string(rune('a'+rnd.IntN(5)))), output.Int(rnd.Int64N(7)-3)),
				value: rnd.Int64() >> rnd.IntN(64), epoch: 1_000_000 + uint64(rnd.IntN(3)),
			})
		}
		maps = append(maps, aggregate(proto, events))
	}
	return maps
}

func TestDecodeFast(t *testing.T) {
	slowOnly := map[string]bool{"@scalar": true, "@stacks": true, "@count": true} // tuples, stacks, bytes not UTF-8
	for _, m := range fastCases() {
		data, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeFast(data)
		if !ok {
			if !slowOnly[m.Name] {
				t.Errorf("%s: decodeFast gave up on %.200s", m.Name, data)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decodeFast\n%+v\nencoding/json\n%+v", m.Name, got, want)
		}
	}
}

// FuzzDecode checks that wherever decodeFast reads a map, encoding/json
// reads the same one.
func FuzzDecode(f *testing.F) {
	for _, m := range fastCases() {
		data, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"version":1,"name":"@x","kind":"count","entries":[{"value":{"uint":01}}]}`,
		`{"version":1,"name":"@x","kind":"count","entries":[{"value":{"int":-9223372036854775808}}]}`,
		`{"version":1,"name":"@x","kind":"count","entries":[{"value":{"uint":18446744073709551616}}]}`,
		`{"version":1,"name":"@x","kind":"sum","entries":[{"value":{"int":1.5}}]} `,
		`{"version":1,"name":"@x","kind":"count","entries":[{"value":{"n":3}}]}`,
		`{"version":1,"name":"@x","kind":"count","entries":[{"value":{"sym":"a","n":3}}]}`,
		`{"version":1,"name":"@x","kind":"count","entries":[]}x`,
		` { "version" : 1 , "name" : "@x" , "kind" : "count" , "key_names" : null }`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := decodeFast(data)
		if !ok {
			return
		}
		want, err := decodeJSON(data)
		if err != nil {
			t.Fatalf("decodeFast read %q, encoding/json: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decodeFast\n%+v\nencoding/json\n%+v", data, got, want)
		}
	})
}

package mapmerge

import (
	"io"
	"strings"
	"testing"

	"gtrace/compiler"
	"gtrace/internal/testutils"
	"gtrace/output"
	"gtrace/runtime"
	"gtrace/sema"
)

// wirePrinter keeps the maps a run prints at exit in the wire format,
// as gtrace agent sends them.
type wirePrinter struct {
	*output.Text
	t    *testing.T
	maps map[string][]byte
}

func (p *wirePrinter) Map(m *output.Map, top int, div uint32) error {
	data, err := Encode(m) // now: a map's Source is valid only while it prints
	if err != nil {
		p.t.Fatal(err)
	}
	p.maps[m.Name] = data
	return nil
}

// runMaps runs src on this kernel and returns its exit maps, decoded
// from the wire format.
func runMaps(t *testing.T, src string) map[string]*output.Map {
	t.Helper()
	prog, err := compiler.Compile([]byte(src), &compiler.Options{Check: sema.Options{Env: func(k string) (string, bool) {
		if k == sema.DummyTSMapEnv {
			return "@ts", true
		}
		return "", false
	}}})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	p := &wirePrinter{Text: output.NewText(io.Discard, io.Discard), t: t, maps: map[string][]byte{}}
	var stderr strings.Builder
	if _, err := runtime.Run(prog.Output, &runtime.Options{Printer: p, Stderr: &stderr, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	maps := map[string]*output.Map{}
	for name, data := range p.maps {
		if maps[name], err = Decode(data); err != nil {
			t.Fatal(err)
		}
	}
	return maps
}

// TestMergeRuns runs a program on this kernel as three nodes would, one
// share of the events each, and merges their maps: they must print as
// the maps of one run that saw every event.
func TestMergeRuns(t *testing.T) {
	testutils.RequireRoot(t)
	// Each node's events, as statements of BEGIN; the tseries clock @ts
	// stands still at 1s.
	shares := []string{
		`@c[comm] = count(); @c["x"] = count(); @s[1] = sum(-7); @mn = min(5); @mx = max(-5);
		 @a[(int64)2] = avg(10); @st = stats(100); @h = hist(0); @h = hist(1000); @l = lhist(3, 0, 10, 2);
		 @t = tseries(4, 100ms, 5, "sum"); @tm = tseries(4, 100ms, 5, "max");`,
		`@c["x"] = count(); @s[1] = sum(20); @s[2] = sum(1); @mn = min(-3); @mx = max(7);
		 @a[(int64)2] = avg(21); @a[(int64)3] = avg(-4); @st = stats(1); @h = hist(1 << 40); @l = lhist(-1, 0, 10, 2); @l = lhist(99, 0, 10, 2);
		 @t = tseries(5, 100ms, 5, "sum"); @tm = tseries(9, 100ms, 5, "max");`,
		`@c["y"] = count(); @mn = min(100); @mx = max(-100); @a[(int64)2] = avg(0); @st = stats(-50); @h = hist(1000);
		 @t = tseries(-2, 100ms, 5, "sum"); @tm = tseries(1, 100ms, 5, "max");`,
	}
	program := func(body string) string { return `BEGIN { @ts = (uint64)1s; ` + body + ` clear(@ts); exit(); }` }

	nodes := map[string][]*output.Map{}
	for _, share := range shares {
		for name, m := range runMaps(t, program(share)) {
			nodes[name] = append(nodes[name], m)
		}
	}
	whole := runMaps(t, program(strings.Join(shares, "\n")))
	for name, want := range whole {
		if name == "@ts" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if len(nodes[name]) == 0 {
				t.Fatalf("no node has %s", name)
			}
			got, err := Merge(nodes[name])
			if err != nil {
				t.Fatal(err)
			}
			// One run's entries are in its own order; compare both in
			// the merged order of keys.
			want, err := Merge([]*output.Map{want})
			if err != nil {
				t.Fatal(err)
			}
			if printed(got) != printed(want) {
				t.Errorf("merged prints\n%s\none run prints\n%s", printed(got), printed(want))
			}
		})
	}
	if len(whole) < len(nodes) {
		t.Errorf("one run has %d maps, the nodes %d", len(whole), len(nodes))
	}
}

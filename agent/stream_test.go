package agent

import (
	"bufio"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"gtrace/mapmerge"
	"gtrace/output"
)

// TestStream checks the answer of /v1/run as a run writes it: lines as
// they end, a last line without a newline, maps printed while the
// script runs as text, the maps at its end in the wire format, and the
// end with the exit code.
func TestStream(t *testing.T) {
	var b strings.Builder
	s := newStream(&b)
	p := s.Printer()
	during := &output.Map{Name: "@during", Kind: output.Count, Entries: []output.Entry{{Value: output.Uint(2)}}}
	atEnd := &output.Map{Name: "@n", Kind: output.Count, KeyNames: []string{"comm"},
		Entries: []output.Entry{{Key: []output.Value{output.Str("bash")}, Value: output.Uint(7)}}}
	steps := []func() error{
		func() error { return p.Printf("one\ntw") },
		func() error { return p.Printf("o\n") },
		func() error { return p.Map(during, 0, 0) },
		func() error { _, err := s.Stderr.Write([]byte("Attached 1 probe\n")); return err },
		func() error { return p.Printf("no newline") },
		p.End,
		func() error { return p.Map(atEnd, 0, 0) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	s.end(3)

	var got []Message
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		var m Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, m)
	}
	want := []string{"line one", "line two", "line @during: 2", "stderr Attached 1 probe", "line no newline", "map", "end 3"}
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d:\n%s", len(got), len(want), b.String())
	}
	for i, m := range got {
		desc := m.Type
		switch m.Type {
		case "line", "stderr":
			desc += " " + m.Text
		case "end":
			if m.Exit != nil {
				desc += " " + strconv.Itoa(*m.Exit)
			}
		}
		if desc != want[i] {
			t.Errorf("message %d: %s, want %s", i, desc, want[i])
		}
	}
	decoded, err := mapmerge.Decode(got[5].Map)
	if err != nil {
		t.Fatal(err)
	}
	if text, want := output.MapText(decoded, 0, 0), output.MapText(atEnd, 0, 0); text != want {
		t.Errorf("the map at the end reads back as\n%s\nwant\n%s", text, want)
	}
}

package mapmerge

import (
	"bytes"
	"strings"
	"testing"

	"gtrace/output"
)

func TestWireRoundTrip(t *testing.T) {
	for _, m := range sampleMaps() {
		t.Run(m.Name, func(t *testing.T) {
			data, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(data, []byte("\n")) != 1 || !bytes.HasPrefix(data, []byte(`{"version":1,`)) {
				t.Errorf("not one versioned line: %s", data)
			}
			got, err := Decode(data)
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if printed(got) != printed(m) {
				t.Errorf("prints as\n%s\nwant\n%s", printed(got), printed(m))
			}
			if printed(m) == "" && m.Zero == nil {
				t.Errorf("prints nothing")
			}
			if (m.Zero == nil) != (got.Zero == nil) {
				t.Errorf("zero entry %v, want %v", got.Zero, m.Zero)
			}
			again, err := Encode(got)
			if err != nil || !bytes.Equal(again, data) {
				t.Errorf("encodes again as %s, %v", again, err)
			}
		})
	}
}

// tableSource holds entries as the runtime's big maps do, behind Source.
type tableSource []output.Entry

func (s tableSource) Len() int { return len(s) }

func (s tableSource) Entry(i int, key bool) output.Entry {
	e := s[i]
	if !key {
		e.Key = nil
	}
	return e
}

func TestWireSource(t *testing.T) {
	for _, m := range sampleMaps() {
		if len(m.Entries) < 2 {
			continue
		}
		viaSource := *m
		viaSource.Source, viaSource.Entries = tableSource(m.Entries), nil
		a, err := Encode(&viaSource)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: from a Source\n%s\nfrom Entries\n%s", m.Name, a, b)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"version":2,"name":"@x","kind":"count"}`, "version 2"},
		{`{"version":1,"name":"@x","kind":"histogram"}`, `unknown kind "histogram"`},
		{`{"version":1,"name":"@h","kind":"hist","hist_bits":9}`, "hist bits 9"},
		{`{"version":1,"name":"@l","kind":"lhist","lmin":0,"lmax":10,"lstep":0}`, "lhist bounds"},
		{`{"version":1,"name":"@t","kind":"tseries"}`, "tseries interval"},
		{`{"version":1,"name":"@l","kind":"lhist","lmax":10,"lstep":5,"entries":[{"buckets":[1,2,3,4,5]}]}`, "5 buckets, more than the 4"},
		{`{"version":1,"name":"@x","kind":"count","entries":[{"value":{"int":1,"str":"a"}}]}`, "more than one type"},
		{`{"version":1,"name":"@x","kind":"count","entries":[{"key":[{"uint":-1}]}]}`, "decode map"},
		{`not json`, "decode map"},
	} {
		_, err := Decode([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, m := range []*output.Map{
		{Name: "@x\xff", Kind: output.Count},
		{Name: "@x", Kind: output.TSeries + 1},
	} {
		if _, err := Encode(m); err == nil {
			t.Errorf("%q: no error", m.Name)
		}
	}
}

package output

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func TestJSONMessage(t *testing.T) {
	tests := []struct {
		isError bool
		msg     string
		want    string
	}{
		{true, `bad "x"`, `{"type": "errorf", "msg": "bad \"x\"", "filename": "stdin", "line": 2, "col": 9}` + "\n"},
		{false, "w\n", `{"type": "warnf", "msg": "w\n", "filename": "stdin", "line": 2, "col": 9}` + "\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := NewJSON(&b).Message(tt.isError, tt.msg, Location{File: "stdin", Line: 2, Col: 9}); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("got %s, want %s", b.String(), tt.want)
		}
	}
}

func TestPcap(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "pcap")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPcap(f)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 123456789)
	if err := p.Write(at, []byte{0x45, 0, 0, 20}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 101, 0, 0, 0,
		0x00, 0xf1, 0x53, 0x65, 0x40, 0xe2, 0x01, 0, 4, 0, 0, 0, 4, 0, 0, 0,
		0x45, 0, 0, 20,
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got % x\nwant % x", got, want)
	}
}

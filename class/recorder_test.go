package class

import (
	"bytes"
	"strings"
	"testing"

	"gtrace/calltrace"
	"gtrace/output"
)

// entry, inner and exit are the events Generate's program sends.
func entry(fn string, addr uint64, isNew bool, lane, cpu int, ts uint64, size int64) output.Value {
	n := uint64(0)
	if isNew {
		n = 1
	}
	return output.Tuple(output.Int(eventEntry), output.Str(fn), output.Uint(addr), output.Uint(n),
		output.Uint(uint64(lane)), output.Uint(uint64(lane)), output.Uint(uint64(cpu)), output.Str("dd"),
		output.Uint(ts), output.Int(size))
}

func inner(fn string, lane int, ts uint64) output.Value {
	return output.Tuple(output.Int(eventInner), output.Str(fn), output.Uint(uint64(lane)), output.Uint(ts))
}

func exit(fn string, lane int, ts uint64) output.Value {
	return output.Tuple(output.Int(eventExit), output.Str(fn), output.Uint(uint64(lane)), output.Uint(ts))
}

// TestRecorderLives feeds a recorder the events of two bios at one
// address, one after the other, each completed in an interrupt on the
// idle thread of another CPU, and of a bio not followed inside a
// followed one's call; events come out of time order, as CPUs share the
// ring buffer.
func TestRecorderLives(t *testing.T) {
	const a, idle = 0xffff0000, LaneIdle + 1
	events := []output.Value{
		entry("kprobe:bio_init", a, true, 100, 0, 1000, 0),
		exit("kretprobe:bio_init", 100, 1100),
		entry("kprobe:submit_bio", a, false, 100, 0, 1200, 4096),
		// bio_split of another bio, not followed, inside submit_bio:
		// its return must not close submit_bio.
		inner("kprobe:submit_bio", 100, 1300),
		exit("kretprobe:submit_bio", 100, 1400),
		exit("kretprobe:submit_bio", 100, 1500),
		// The completion, sent before an earlier event of CPU 0.
		entry("kprobe:bio_endio", a, false, idle, 1, 2100, 0),
		entry("kprobe:bio_uninit", a, false, 100, 0, 2000, 0),
		exit("kretprobe:bio_endio", idle, 2200),
		exit("kretprobe:bio_uninit", 100, 2300),
		// The next bio at the same address.
		entry("kprobe:bio_init", a, true, 100, 0, 3000, 0),
		exit("kretprobe:bio_init", 100, 3100),
		entry("kprobe:submit_bio", a, false, 100, 0, 3200, 8192),
		// Its return was lost.
		output.Tuple(output.Int(9)), // not an event
	}
	r := NewRecorder(nil)
	for _, v := range events {
		if err := r.Value(v); err != nil {
			t.Fatal(err)
		}
	}
	if r.Events() != len(events)-1 || r.bad != 1 {
		t.Errorf("%d events and %d bad ones, want %d and 1", r.Events(), r.bad, len(events)-1)
	}
	rec := r.Recording("bio", []string{"bi_iter.bi_size"})
	var got bytes.Buffer
	for _, track := range rec.Tracks {
		got.WriteString(track.Name + "\n")
		track.Walk(func(c *calltrace.Call, depth int) {
			got.WriteString(strings.Repeat("  ", depth+1) + c.Func + " " + c.Fields[0])
			if c.Exit != 0 {
				got.WriteString(" " + c.Duration().String())
			}
			got.WriteString("\n")
		})
	}
	want := `bio 0xffff0000 #1
  bio_init 0 100ns
  submit_bio 4096 300ns
  bio_uninit 0 300ns
  bio_endio 0 100ns
bio 0xffff0000 #2
  bio_init 0 100ns
  submit_bio 8192
`
	if got.String() != want {
		t.Errorf("recording\n%s\nwant\n%s", got.String(), want)
	}
	var file bytes.Buffer
	if err := rec.WriteChrome(&file); err != nil {
		t.Fatal(err)
	}
	if err := calltrace.Check(&file); err != nil {
		t.Errorf("the recording breaks the format's rules: %v", err)
	}
}

func TestParseFilter(t *testing.T) {
	members := map[string]bool{"bi_iter": true, "bi_opf": true, "cpu": true}
	for _, tc := range []struct{ text, want string }{
		{"bi_iter.bi_size > 4096", "$o->bi_iter.bi_size > 4096"},
		{"bi_opf & 1 && pid == 42", "$o->bi_opf & 1 && pid == 42"},
		{`comm == "bi_opf"`, `comm == "bi_opf"`},
		{"bi_iter . bi_opf", "$o->bi_iter . bi_opf"},
		{"cpu == 1", "$o->cpu == 1"}, // a member shadows a builtin
		{"0x10 & bi_opf", "0x10 & $o->bi_opf"},
	} {
		f, err := ParseFilter(tc.text, members)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if f.expr != tc.want || len(f.pos) != len(f.expr) {
			t.Errorf("%q is %q (%d positions), want %q", tc.text, f.expr, len(f.pos), tc.want)
		}
	}
}

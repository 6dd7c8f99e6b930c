package calltrace

import (
	"bytes"
	"strings"
	"testing"
)

// bioLife builds one bio's life: submit_bio with two calls inside on
// thread 100, and bio_endio on thread 0 (an interrupt), overlapping the
// submit in time; the submit's last inner call never returns.
func bioLife() *Recording {
	r := &Recording{Command: "class", Struct: "bio", Fields: []string{"bi_iter.bi_size"}}
	b := NewBuilder(r)
	t := b.Track("bio 0xffff0001 #1")
	enter := func(fn string, ts uint64, tid int) {
		b.Enter(t, &Call{Func: fn, Entry: ts, Tid: tid, Pid: tid, CPU: tid % 2, Comm: "dd", Fields: []string{"4096"}})
	}
	enter("submit_bio", 1000, 100)
	enter("bio_check", 1500, 100)
	b.Exit(t, 100, "bio_check", 2000)
	enter("bio_split", 2500, 100)
	enter("bio_endio", 3000, 0)
	b.Exit(t, 0, "bio_endio", 3500)
	b.Exit(t, 100, "submit_bio", 4000) // bio_split's return was missed
	return r
}

func TestBuilderNests(t *testing.T) {
	r := bioLife()
	tr := r.Tracks[0]
	var got []string
	tr.Walk(func(c *Call, depth int) {
		got = append(got, strings.Repeat(".", depth)+c.Func)
	})
	want := "submit_bio .bio_check .bio_split bio_endio"
	if strings.Join(got, " ") != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if d := tr.Calls[0].Duration(); d != 3000 {
		t.Errorf("submit_bio took %v, want 3µs", d)
	}
	if tr.Calls[0].Calls[1].Exit != 0 {
		t.Errorf("bio_split has an exit, but its return was missed")
	}
	if r.Start != 1000 || tr.End() != 4000 {
		t.Errorf("start %d end %d, want 1000 and 4000", r.Start, tr.End())
	}
	b := NewBuilder(r)
	if b.Exit(tr, 7, "nothing", 1) {
		t.Errorf("an exit without an entry matched")
	}
}

func TestChromeRoundTrip(t *testing.T) {
	r := bioLife()
	var buf bytes.Buffer
	if err := r.WriteChrome(&buf); err != nil {
		t.Fatal(err)
	}
	if err := Check(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("written trace breaks the format's rules: %v\n%s", err, buf.String())
	}
	back, err := ReadChrome(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	r.WriteText(&want)
	back.WriteText(&got)
	if want.String() != got.String() {
		t.Errorf("read back:\n%s\nwant:\n%s", got.String(), want.String())
	}
}

func TestCheckRefuses(t *testing.T) {
	for _, tc := range []struct{ name, trace, err string }{
		{"no end", `{"traceEvents":[{"name":"f","ph":"B","ts":1,"pid":1,"tid":1}]}`, "has no E"},
		{"no begin", `{"traceEvents":[{"name":"f","ph":"E","ts":1,"pid":1,"tid":1}]}`, "has no B"},
		{"crossed", `{"traceEvents":[{"name":"f","ph":"B","ts":1,"pid":1,"tid":1},{"name":"g","ph":"B","ts":2,"pid":1,"tid":1},
			{"name":"f","ph":"E","ts":3,"pid":1,"tid":1},{"name":"g","ph":"E","ts":4,"pid":1,"tid":1}]}`, "innermost open B"},
		{"other lane", `{"traceEvents":[{"name":"f","ph":"B","ts":1,"pid":1,"tid":1},{"name":"f","ph":"E","ts":2,"pid":1,"tid":2}]}`, "has no B"},
		{"time goes back", `{"traceEvents":[{"name":"f","ph":"B","ts":5,"pid":1,"tid":1},{"name":"f","ph":"E","ts":4,"pid":1,"tid":1}]}`, "goes back"},
		{"not json", `{"traceEvents":[`, "read trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(strings.NewReader(tc.trace))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Check: %v, want an error saying %q", err, tc.err)
			}
		})
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := bioLife().WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := `bio 0xffff0001 #1: 4 calls, 3.000 us
    TIME(us) CPU     TID COMM                 DURATION  FUNCTION
       0.000   0     100 dd                             submit_bio() {  bi_iter.bi_size=4096
       0.500   0     100 dd                   0.500 us    bio_check();
       1.500   0     100 dd                          -    bio_split();
                                              3.000 us  } /* submit_bio */
       2.000   0       0 dd                   0.500 us  bio_endio();
`
	if buf.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", buf.String(), want)
	}
}

package calltrace

import (
	"bytes"
	"testing"
)

// FuzzReadChrome reads any file as a recording, as gtrace view and the
// --serve options do with the user's file: an error or a recording, never
// a panic; and a recording read prints as text and graph, and writes back
// to a file that reads again.
func FuzzReadChrome(f *testing.F) {
	var seed bytes.Buffer
	bioLife().WriteChrome(&seed)
	f.Add(seed.String())
	f.Add(`{"traceEvents":[{"name":"f","ph":"B","ts":-1,"pid":1,"tid":1},{"name":"f","ph":"E","ts":1e300,"pid":1,"tid":1}]}`)
	f.Add(`{"traceEvents":[{"name":"f","ph":"B","ts":1,"pid":1,"tid":1,"args":{"cpu":"x","fields":[1]}},{"name":"f","ph":"E","ts":2,"pid":1,"tid":1,"args":{"unfinished":true}}],"otherData":{"fields":["a"],"start_ns":"18446744073709551615"}}`)
	f.Fuzz(func(t *testing.T, data string) {
		rec, err := ReadChrome(bytes.NewReader([]byte(data)))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := rec.WriteText(&out); err != nil {
			t.Fatal(err)
		}
		if err := WriteGraph(&out, rec.Graph()); err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := rec.WriteChrome(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadChrome(&out); err != nil {
			t.Fatalf("a recording read from %q writes a file that does not read: %v\n%s", data, err, out.String())
		}
	})
}

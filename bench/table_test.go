package bench

import (
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	rows := []Row{
		{Figure: "wall", Target: "< 20 ms", Unit: Duration, Gtrace: 6.1e6, Bpftrace: 251e6},
		{Figure: "rss", Unit: Bytes, Gtrace: 7.5 * (1 << 20), Bpftrace: 88 * (1 << 20)},
		{Figure: "event", Unit: NsPerEvent, Gtrace: 80, Bpftrace: 150},
		{Figure: "attach alone", Unit: Duration, Gtrace: 1.5e9},
		{Figure: "tool", Unit: Duration, Gtrace: 20e6, Bpftrace: 30e6, Versus: "libbpf-tools"},
	}
	var b strings.Builder
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := `| figure | target | gtrace | bpftrace | bpftrace / gtrace |
| --- | --- | ---: | ---: | ---: |
| wall | < 20 ms | 6.10 ms | 251.0 ms | 41× |
| rss | — | 7.5 MiB | 88.0 MiB | 12× |
| event | — | 80 ns | 150 ns | 1.9× |
| attach alone | — | 1.50 s | — | — |

| figure | target | gtrace | libbpf-tools | libbpf-tools / gtrace |
| --- | --- | ---: | ---: | ---: |
| tool | — | 20.0 ms | 30.0 ms | 1.5× |
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

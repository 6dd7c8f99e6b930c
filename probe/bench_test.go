package probe

import "testing"

func TestParseBench(t *testing.T) {
	checkParse(t, []parseCase{
		{text: "bench:a", want: Probe{Kind: Bench, Name: "bench:a", Target: "a"}},
		{text: "BENCH:lhist", want: Probe{Kind: Bench, Name: "bench:lhist", Target: "lhist"}},
		{text: "bench", err: "bench probe type requires 1 arguments, found 0"},
		{text: "bench:a:f", err: "bench probe type requires 1 arguments, found 2"},
		{text: "bench:", err: "bench probes must have a name"},
	}, func(t *testing.T, p Probe) {
		if p.Attached() {
			t.Errorf("%s is attached; it is run", p.Name)
		}
	})
}

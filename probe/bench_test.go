package probe

import (
	"reflect"
	"testing"
)

func TestParseBench(t *testing.T) {
	tests := []struct {
		text string
		want Probe
		err  string
	}{
		{text: "bench:a", want: Probe{Kind: Bench, Name: "bench:a", Target: "a"}},
		{text: "BENCH:lhist", want: Probe{Kind: Bench, Name: "bench:lhist", Target: "lhist"}},
		{text: "bench", err: "bench probe type requires 1 arguments, found 0"},
		{text: "bench:a:f", err: "bench probe type requires 1 arguments, found 2"},
		{text: "bench:", err: "bench probes must have a name"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("Parse(%q) error %v, want %q", tt.text, err, tt.err)
				}
				return
			}
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
			}
			if got[0].Attached() {
				t.Errorf("%s is attached; it is run", tt.text)
			}
		})
	}
}

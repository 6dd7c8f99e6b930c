package probe

import (
	"reflect"
	"testing"
)

func TestParseTest(t *testing.T) {
	tests := []struct {
		text string
		want Probe
		err  string
	}{
		{text: "test:okay", want: Probe{Kind: Test, Name: "test:okay", Target: "okay"}},
		{text: "test:map_functions_1", want: Probe{Kind: Test, Name: "test:map_functions_1", Target: "map_functions_1"}},
		{text: "test", err: "test probe type requires 1 arguments, found 0"},
		{text: "test:a:b", err: "test probe type requires 1 arguments, found 2"},
		{text: "test:", err: "test probes must have a name"},
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
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
			}
			if got[0].Attached() || got[0].ProgramType().String() != "XDP" {
				t.Errorf("%s: attached %v, type %v; want a run XDP program", tt.text, got[0].Attached(), got[0].ProgramType())
			}
		})
	}
}

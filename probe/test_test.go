package probe

import "testing"

func TestParseTest(t *testing.T) {
	checkParse(t, []parseCase{
		{text: "test:okay", want: Probe{Kind: Test, Name: "test:okay", Target: "okay"}},
		{text: "test:map_functions_1", want: Probe{Kind: Test, Name: "test:map_functions_1", Target: "map_functions_1"}},
		{text: "test", err: "test probe type requires 1 arguments, found 0"},
		{text: "test:a:b", err: "test probe type requires 1 arguments, found 2"},
		{text: "test:", err: "test probes must have a name"},
	}, func(t *testing.T, p Probe) {
		if p.Attached() || p.ProgramType().String() != "XDP" {
			t.Errorf("%s: attached %v, type %v; want a run XDP program", p.Name, p.Attached(), p.ProgramType())
		}
	})
}

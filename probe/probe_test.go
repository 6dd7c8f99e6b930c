package probe

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		text string
		want Probe
	}{
		{"BEGIN", Probe{Kind: Begin, Name: "begin"}},
		{"end", Probe{Kind: End, Name: "end"}},
		{"tracepoint:sched:sched_switch", Probe{Kind: Tracepoint, Name: "tracepoint:sched:sched_switch", Target: "sched", Event: "sched_switch"}},
		{"t:sched:sched_switch", Probe{Kind: Tracepoint, Name: "tracepoint:sched:sched_switch", Target: "sched", Event: "sched_switch"}},
		{"rawtracepoint:sched_switch", Probe{Kind: RawTracepoint, Name: "rawtracepoint:sched_switch", Event: "sched_switch"}},
		{"rt:vmlinux:sched_switch", Probe{Kind: RawTracepoint, Name: "rawtracepoint:sched_switch", Event: "sched_switch"}},
		{"interval:s:1", Probe{Kind: Interval, Name: "interval:s:1", Event: "cpu-clock", Period: 1e9}},
		{"i:ms:100", Probe{Kind: Interval, Name: "interval:ms:100", Event: "cpu-clock", Period: 1e8}},
		{"interval:s:9223372036", Probe{Kind: Interval, Name: "interval:s:9223372036", Event: "cpu-clock", Period: 9223372036e9}},
		{"interval:5us", Probe{Kind: Interval, Name: "interval:us:5", Event: "cpu-clock", Period: 5000}},
		{"profile:hz:99", Probe{Kind: Profile, Name: "profile:hz:99", Event: "cpu-clock", Freq: 99}},
		{"software:faults:10", Probe{Kind: Software, Name: "software:faults:10", Event: "page-faults", Period: 10}},
		{"s:cpu-clock", Probe{Kind: Software, Name: "software:cpu-clock", Event: "cpu-clock", Period: 1000000}},
		{"hardware:cycles:1000", Probe{Kind: Hardware, Name: "hardware:cycles:1000", Event: "cpu-cycles", Period: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.text, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"nope:x", "invalid probe type: nope"},
		{"BEGIN:x", "begin probe takes no arguments"},
		{"tracepoint:onlyone", "tracepoint probe must have the form tracepoint:category:event"},
		{"interval:s:0", `interval probe: invalid rate "0"`},
		{"interval:parsecs:3", `interval probe: invalid unit "parsecs"`},
		{"interval:s", "interval probe must have the form"},
		{"software:nonsense", `software probe: unknown event "nonsense"`},
		{"hardware:cycles:x", `hardware probe: invalid count "x"`},
		{"interval:s:18446744073709551615", "interval probe: a period of 18446744073709551615 s is too long: the kernel takes at most 9223372036 s"},
		{"interval:ms:9223372036855", "interval probe: a period of 9223372036855 ms is too long: the kernel takes at most 9223372036854 ms"},
		{"interval:ns:9223372036854775808", "interval probe: a period of 9223372036854775808 ns is too long"},
		{"software:cpu-clock:9223372036854775808", "software probe: a count of 9223372036854775808 is too large: the kernel takes at most 9223372036854775807"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error %v, want %q", tt.text, err, tt.want)
			}
		})
	}
}

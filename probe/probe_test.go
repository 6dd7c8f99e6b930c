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
		{"software:cpu:1e6", Probe{Kind: Software, Name: "software:cpu:1000000", Event: "cpu-clock", Period: 1e6}},
		{"interval:ms:1_000", Probe{Kind: Interval, Name: "interval:ms:1000", Event: "cpu-clock", Period: 1e9}},
		{"watchpoint:0x10000000:8:wr", Probe{Kind: Watchpoint, Name: "watchpoint:268435456:8:rw", Address: 0x10000000, Length: 8, Event: "rw"}},
		{"w:1234:1:x", Probe{Kind: Watchpoint, Name: "watchpoint:1234:1:x", Address: 1234, Length: 1, Event: "x"}},
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
		{"uprobe", "uprobe probe must have the form uprobe:binary:function"},
		{"ur", "uretprobe probe must have the form uretprobe:binary:function"},
		{"software:nonsense", `software probe: unknown event "nonsense"`},
		{"hardware:cycles:x", `hardware probe: invalid count "x"`},
		{"interval:s:18446744073709551615", "interval probe: a period of 18446744073709551615 s is too long: the kernel takes at most 9223372036 s"},
		{"interval:ms:9223372036855", "interval probe: a period of 9223372036855 ms is too long: the kernel takes at most 9223372036854 ms"},
		{"interval:ns:9223372036854775808", "interval probe: a period of 9223372036854775808 ns is too long"},
		{"software:cpu-clock:9223372036854775808", "software probe: a count of 9223372036854775808 is too large: the kernel takes at most 9223372036854775807"},
		{"watchpoint:0x1000:8", "watchpoint probe type requires 3 arguments, found 2"},
		{"watchpoint:1b:8:w", "Invalid function/address argument: invalid trailing bytes: 1b"},
		{"watchpoint:1:8a:w", "Invalid length argument: invalid trailing bytes: 8a"},
		{"watchpoint:0x0:8:w", "watchpoint must be attached to a non-zero address"},
		{"watchpoint:0x1000:3:w", "watchpoint length must be one of (1,2,4,8)"},
		{"watchpoint:0x1000:8:b", "watchpoint mode must be combination of (r,w,x)"},
		{"watchpoint:0x1000:8:ww", "watchpoint modes may not be duplicated"},
		{"watchpoint:0x1000:8:r", "invalid watchpoint mode: r (supported modes: rw,w,x)"},
		{"watchpoint:0x1000:8:rwx", "invalid watchpoint mode: rwx"},
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

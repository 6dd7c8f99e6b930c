package output

import "testing"

func TestStackText(t *testing.T) {
	frames := []Frame{{Addr: 0x401126, Sym: "uprobeFunction1+0@/src/loop.c:4"}, {Addr: 0x401160, Sym: "spin+37"}}
	tests := []struct {
		mode   StackMode
		frames []Frame
		want   string
	}{
		{StackBpftrace, frames, "\n        uprobeFunction1+0@/src/loop.c:4\n        spin+37\n"},
		{StackPerf, frames, "\n\t401126 uprobeFunction1+0@/src/loop.c:4\n\t401160 spin+37\n"},
		{StackRaw, frames, "\n401126\n401160\n"},
		{StackBuildID, []Frame{{Sym: "ab01 0x1126"}, {Sym: "7f0011"}}, "\nab01 0x1126\n7f0011\n"},
		{StackBpftrace, []Frame{{Addr: 0x1, Sym: "f+1"}, {Addr: UnwindFailure, Sym: ""}, {Addr: 0x2, Sym: "g+2"}}, "\n        f+1\n        <unwind failure>\n"},
	}
	for _, tt := range tests {
		if got := Stack(tt.mode, tt.frames).String(); got != tt.want {
			t.Errorf("mode %d: got %q, want %q", tt.mode, got, tt.want)
		}
	}
}

package main

import (
	"slices"
	"testing"
)

func TestParseDebugInfo(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		err  bool
	}{
		{[]string{"--debuginfo", "/a", "-e", "x"}, []string{"/a"}, false},
		{[]string{"--debuginfo=/a:b", "--debuginfo", "c", "-e", "x"}, []string{"/a", "b", "c"}, false},
		{[]string{"-e", "x", "--debuginfo"}, nil, true},
		{[]string{"--debuginfo=a::b", "-e", "x"}, nil, true},
	}
	for _, tt := range tests {
		o, err := parseArgs(tt.args)
		if tt.err {
			if err == nil {
				t.Errorf("parseArgs(%q) succeeded", tt.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
		} else if !slices.Equal(o.debugDirs, tt.want) {
			t.Errorf("parseArgs(%q) = %q, want %q", tt.args, o.debugDirs, tt.want)
		}
	}
}

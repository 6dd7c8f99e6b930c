package bpfprof

import (
	"fmt"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		list string
		want string
		err  bool
	}{
		{list: "0", want: "[0]"},
		{list: "0-3", want: "[0 1 2 3]"},
		{list: "0-1,4,6-7", want: "[0 1 4 6 7]"},
		{list: "", err: true},
		{list: "3-1", err: true},
		{list: "a-b", err: true},
	}
	for _, tc := range tests {
		got, err := parseCPUList(tc.list)
		if (err != nil) != tc.err || !tc.err && fmt.Sprint(got) != tc.want {
			t.Errorf("parseCPUList(%q) = %v, %v; want %s (error: %v)", tc.list, got, err, tc.want, tc.err)
		}
	}
}

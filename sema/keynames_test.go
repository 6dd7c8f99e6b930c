package sema

import (
	"slices"
	"testing"
)

// TestKeyNames checks the names a map's key parts get from their first
// keyed use, for the labels of a pprof profile.
func TestKeyNames(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{`kprobe:f { @[comm, pid, kstack] = count(); }`, []string{"comm", "pid", "kstack"}},
		{`kprobe:f { $x = 1; @[$x, tid + 1, "s"] = count(); }`, []string{"$x", "", ""}},
		{`kprobe:f { print(@); @[cpu] = count(); @[cpu + 1] = count(); }`, []string{"cpu"}},
		{`kprobe:f { @ = count(); }`, nil},
	}
	for _, tt := range tests {
		info, errs := check(t, tt.src, false)
		if errs != "" {
			t.Fatalf("%s: %s", tt.src, errs)
		}
		if got := info.Maps["@"].KeyNames; !slices.Equal(got, tt.want) {
			t.Errorf("%s: key names %q, want %q", tt.src, got, tt.want)
		}
	}
}

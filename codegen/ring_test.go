package codegen

import (
	"os"
	"testing"
)

// TestRingBytes checks the ring buffer's size from perf_rb_pages: a
// power of two of at least the pages asked for.
func TestRingBytes(t *testing.T) {
	page := uint32(os.Getpagesize())
	tests := []struct {
		pages int
		want  uint32
	}{
		{0, ringSize},
		{1, page},
		{3, 4 * page},
		{64, 64 * page},
		{1 << 18, (1 << 18) * page},
	}
	for _, tt := range tests {
		if got := ringBytes(tt.pages); got != tt.want {
			t.Errorf("ringBytes(%d) = %d, want %d", tt.pages, got, tt.want)
		}
	}
}

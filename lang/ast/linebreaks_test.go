package ast

import (
	"math/rand"
	"strings"
	"testing"
)

// firstFit is bpftrace's own search, spelled out: try the ways of breaking
// a list in counting order (bit i set breaks before item i+1) and keep the
// first whose lines all fit in w, or break nowhere.
func firstFit(widths []uint, w uint) uint64 {
	n := len(widths)
	for mask := uint64(0); mask < 1<<(n-1); mask++ {
		widest, line := uint(0), widths[0]
		for i := 1; i < n; i++ {
			if mask&(1<<(i-1)) != 0 {
				widest, line = max(widest, line), widths[i]
			} else {
				line += widths[i]
			}
		}
		if max(widest, line) <= w {
			return mask
		}
	}
	return 0
}

func TestLineBreaks(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 5000 {
		n := 1 + r.Intn(10)
		w := uint(5 + r.Intn(40))
		items := make([]*layout, n)
		widths := make([]uint, n)
		for i := range items {
			widths[i] = uint(1 + r.Intn(20))
			items[i] = textLayout(strings.Repeat("x", int(widths[i])))
		}
		breaks := lineBreaks(items, w)
		got := uint64(0)
		for i := 1; i < n; i++ {
			if breaks[i] {
				got |= 1 << (i - 1)
			}
		}
		if want := firstFit(widths, w); got != want {
			t.Fatalf("widths %v in %d: breaks %b, want %b", widths, w, got, want)
		}
	}
}

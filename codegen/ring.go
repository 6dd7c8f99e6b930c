package codegen

import (
	"math/bits"
	"os"
)

// ringBytes is the ring buffer's size: perf_rb_pages pages rounded up
// to a power of two, which the kernel wants, at most 1 GiB, or ringSize
// when 0.
func ringBytes(pages int) uint32 {
	if pages <= 0 {
		return ringSize
	}
	n := min(uint64(pages)*uint64(os.Getpagesize()), 1<<30)
	return uint32(1) << bits.Len64(n-1)
}

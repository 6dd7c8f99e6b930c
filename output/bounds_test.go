package output

import "testing"

// TestHistUpper checks, for each k, that every value HistBucket puts in
// bucket i lies below HistUpper(i, k) and at or above HistUpper(i-1, k).
func TestHistUpper(t *testing.T) {
	for k := 0; k <= 5; k++ {
		for _, v := range []int64{0, 1, 2, 3, 4, 5, 7, 8, 100, 1000, 1023, 1024, 4097, 1 << 40, 1<<62 + 5, 1<<63 - 1} {
			i := HistBucket(v, k)
			lower := uint64(0)
			if i > 1 {
				lower = HistUpper(i-1, k)
			}
			if upper := HistUpper(i, k); uint64(v) < lower || uint64(v) >= upper {
				t.Errorf("hist(%d, %d): bucket %d is [%d, %d)", v, k, i, lower, upper)
			}
		}
		last := (64 - k) << k
		if got := HistUpper(last, k); got != 1<<63 {
			t.Errorf("k=%d: last bucket's bound %d, want 2^63", k, got)
		}
	}
}

package output

// Fields returns a record's fields, nil for any other value: the named
// parts of a record key, `@m[(pid = pid, comm = comm)]`.
func (v Value) Fields() []Field {
	if v.tag != tagRecord {
		return nil
	}
	return v.fields
}

// HistUpper returns the exclusive upper bound of bucket i >= 1 of
// hist(v, k), as the text output labels it: bucket i holds the values
// from HistUpper(i-1, k) (0 for i = 1) up to HistUpper(i, k) - 1. The
// largest bound, of the last bucket, is 2^63.
func HistUpper(i, k int) uint64 {
	if i <= 2<<k {
		return uint64(i)
	}
	n := uint64(1) << k
	interval := uint64(i) & (n - 1)
	power := uint(i>>k) - 1
	return (uint64(1) << power) * (n + interval)
}

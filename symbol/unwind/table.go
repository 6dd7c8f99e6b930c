package unwind

import (
	"cmp"
	"slices"
)

// merge joins the rows of FDEs into one table sorted by address: a row
// of kind None marks the end of each FDE that another does not follow
// at once, and a row that unwinds as the one before it is left out.
func merge(fdes []fde) []Row {
	slices.SortFunc(fdes, func(a, b fde) int { return cmp.Compare(a.start, b.start) })
	var out []Row
	add := func(r Row) {
		if n := len(out); n > 0 {
			if out[n-1].Addr == r.Addr {
				out[n-1] = r
				if n > 1 && out[n-2].same(r) {
					out = out[:n-1]
				}
				return
			}
			if out[n-1].same(r) {
				return
			}
		}
		out = append(out, r)
	}
	for i, f := range fdes {
		for _, r := range f.rows {
			if r.Addr >= f.end {
				break
			}
			// Overlapping FDEs: the later one wins from its start.
			if n := len(out); n > 0 && r.Addr < out[n-1].Addr {
				continue
			}
			add(r)
		}
		if i+1 == len(fdes) || fdes[i+1].start > f.end {
			add(Row{Addr: f.end})
		}
	}
	return out
}

// Lookup returns the row in effect at addr in rows sorted by address,
// or false where none starts at or before it.
func Lookup(rows []Row, addr uint64) (Row, bool) {
	i, _ := slices.BinarySearchFunc(rows, addr, func(r Row, a uint64) int { return cmp.Compare(r.Addr, a+1) })
	if i == 0 {
		return Row{}, false
	}
	return rows[i-1], true
}

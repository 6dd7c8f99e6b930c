package output

import (
	"cmp"
	"slices"
)

// StackRecorder passes everything to its Printer and keeps each map
// keyed by a stack as it was last printed with entries: normally at
// exit, or at the last print() of a map that is cleared before exit.
// The flame graph and pprof files are written from it.
type StackRecorder struct {
	Printer
	maps map[string]*StackMap
}

// NewStackRecorder returns a recorder printing with p.
func NewStackRecorder(p Printer) *StackRecorder {
	return &StackRecorder{Printer: p, maps: map[string]*StackMap{}}
}

// Map prints m, then keeps it if it has a stack in its key.
func (r *StackRecorder) Map(m *Map, top int, div uint32) error {
	if err := r.Printer.Map(m, top, div); err != nil {
		return err
	}
	sm, err := StackSamples(m)
	if err != nil || sm == nil {
		return err
	}
	r.maps[m.Name] = sm
	return nil
}

// Maps returns the maps kept, in name order.
func (r *StackRecorder) Maps() []*StackMap {
	var maps []*StackMap
	for _, sm := range r.maps {
		maps = append(maps, sm)
	}
	slices.SortFunc(maps, func(a, b *StackMap) int { return cmp.Compare(a.Name, b.Name) })
	return maps
}

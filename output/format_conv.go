package output

// Conversions lists the format's conversions in order, such as "d" or
// "s", for checks of what a helper's format may hold.
func (f *Format) Conversions() []string {
	convs := make([]string, len(f.specs))
	for i, sp := range f.specs {
		convs[i] = sp.conv
	}
	return convs
}

package symbol

import (
	"debug/elf"
	"strings"
)

// LookupFuncs finds the function symbols names of an ELF file in one
// read of its symbol tables, as LookupFunc finds each: the first
// defined one of a name, in .symtab then .dynsym, without its version.
// A name it lacks is not in the map.
func LookupFuncs(path string, names []string) (map[string]Func, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	found := make(map[string]Func, len(names))
	seen := make(map[string]bool, len(names))
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, s := range syms {
			base, _, _ := strings.Cut(s.Name, "@")
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || !want[base] {
				continue
			}
			if seen[base] {
				continue
			}
			seen[base] = true
			off, err := vaddrToOffset(f, s.Value)
			if err != nil {
				continue // left out: LookupFunc says why
			}
			found[base] = Func{Name: base, Value: s.Value, Size: s.Size, FileOffset: off}
		}
	}
	return found, nil
}

package symbol

import (
	"debug/elf"
	"fmt"
	"strings"
)

// Func is a function symbol of an ELF file.
type Func struct {
	Name string
	// Value is its virtual address, Size its length in bytes (0 when
	// the symbol does not say), FileOffset where it starts in the file.
	Value, Size, FileOffset uint64
}

// LookupFunc finds the function symbol name of an ELF file, in .symtab
// or .dynsym; ok is false when there is none.
func LookupFunc(path, name string) (fn Func, ok bool, err error) {
	return findFunc(path, func(s elf.Symbol, base string) bool { return base == name })
}

// FuncAt finds the function symbol of an ELF file whose bytes hold the
// virtual address addr; ok is false when there is none.
func FuncAt(path string, addr uint64) (fn Func, ok bool, err error) {
	return findFunc(path, func(s elf.Symbol, _ string) bool {
		return s.Value <= addr && (addr < s.Value+s.Size || addr == s.Value)
	})
}

// findFunc returns the first defined function symbol that match
// accepts, with its name without a version ("read@@GLIBC_2.2.5" is
// "read").
func findFunc(path string, match func(s elf.Symbol, base string) bool) (Func, bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return Func{}, false, err
	}
	defer f.Close()
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, s := range syms {
			base, _, _ := strings.Cut(s.Name, "@")
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || !match(s, base) {
				continue
			}
			off, err := vaddrToOffset(f, s.Value)
			if err != nil {
				return Func{}, false, fmt.Errorf("%s in %s: %w", base, path, err)
			}
			return Func{Name: base, Value: s.Value, Size: s.Size, FileOffset: off}, true, nil
		}
	}
	return Func{}, false, nil
}

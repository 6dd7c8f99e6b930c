package symbol

import (
	"debug/elf"
	"fmt"
	"strings"
)

// Symbol returns the value and the size of the symbol name in an ELF
// file, from .symtab or .dynsym, for uaddr().
func Symbol(path, name string) (addr, size uint64, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, s := range syms {
			base, _, _ := strings.Cut(s.Name, "@")
			if base == name && s.Value != 0 {
				return s.Value, s.Size, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("%s has no symbol %s", path, name)
}

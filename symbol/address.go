package symbol

import (
	"debug/elf"
	"fmt"
	"strings"
)

// Address returns the value of the symbol name in an ELF file, from
// .symtab or .dynsym, for uaddr().
func Address(path, name string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, s := range syms {
			base, _, _ := strings.Cut(s.Name, "@")
			if base == name && s.Value != 0 {
				return s.Value, nil
			}
		}
	}
	return 0, fmt.Errorf("%s has no symbol %s", path, name)
}

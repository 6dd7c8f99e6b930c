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

// ProbeAddress is the link-time address that a uprobe on fn+off, or at
// file offset fileOff when fn is "", stops at in a position-independent
// file (a PIE program or a library): the traced ip less it is where the
// file is loaded. pie is false for a file loaded where it is linked.
func ProbeAddress(path, fn string, off, fileOff uint64) (vaddr uint64, pie bool, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		return 0, false, nil
	}
	if fn != "" {
		addr, _, err := Symbol(path, fn)
		return addr + off, true, err
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && fileOff >= p.Off && fileOff < p.Off+p.Filesz {
			return p.Vaddr + fileOff - p.Off, true, nil
		}
	}
	return 0, true, fmt.Errorf("%s: no loaded segment holds offset %#x", path, fileOff)
}

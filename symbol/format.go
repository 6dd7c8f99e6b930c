package symbol

import "fmt"

// Sym formats addr as ksym() does: the symbol name, or the address in hex
// if it does not resolve.
func (k *Kernel) Sym(addr uint64) string {
	if name, _, ok := k.Resolve(addr); ok {
		return name
	}
	return hexPointer(addr)
}

// SymOffset formats addr as a kstack frame: "name+offset", or the address
// in hex if it does not resolve.
func (k *Kernel) SymOffset(addr uint64) string {
	if name, off, ok := k.Resolve(addr); ok {
		return fmt.Sprintf("%s+%d", name, off)
	}
	return hexPointer(addr)
}

// hexPointer prints an address the way C++ streams print a void*, which is
// what bpftrace uses for unresolved addresses.
func hexPointer(addr uint64) string {
	if addr == 0 {
		return "0"
	}
	return fmt.Sprintf("0x%x", addr)
}

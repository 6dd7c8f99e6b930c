package symbol

import (
	"fmt"
	"strings"
)

// StackMode selects how a stack is printed, as bpftrace's kstack(mode).
type StackMode int

const (
	// StackBpftrace prints "name+offset" per frame.
	StackBpftrace StackMode = iota
	// StackPerf prints "\taddr name+offset" per frame, like perf script.
	StackPerf
	// StackRaw prints the bare hex address per frame.
	StackRaw
)

// stackIndent is how far bpftrace v0.26 indents frames, both in map keys
// and in printf("%s"). (Older releases used four spaces in map keys.)
const stackIndent = "        "

// unwindFailure is the frame value the kernel stores when it gave up.
const unwindFailure = ^uint64(0)

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

// Stack formats the frames of a kernel stack, innermost first, as bpftrace
// prints kstack: a leading newline, then one line per frame.
func (k *Kernel) Stack(frames []uint64, mode StackMode) string {
	var b strings.Builder
	b.WriteByte('\n')
	for _, addr := range frames {
		if addr == unwindFailure {
			b.WriteString(stackIndent + "<unwind failure>\n")
			break
		}
		switch mode {
		case StackRaw:
			fmt.Fprintf(&b, "%x\n", addr)
		case StackPerf:
			fmt.Fprintf(&b, "\t%x %s\n", addr, k.SymOffset(addr))
		default:
			b.WriteString(stackIndent + k.SymOffset(addr) + "\n")
		}
	}
	return b.String()
}

// hexPointer prints an address the way C++ streams print a void*, which is
// what bpftrace uses for unresolved addresses.
func hexPointer(addr uint64) string {
	if addr == 0 {
		return "0"
	}
	return fmt.Sprintf("0x%x", addr)
}

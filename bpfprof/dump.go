package bpfprof

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/arch/x86/x86asm"
)

// Dump writes program id's translated instructions, with their source
// lines where the program has line information, and its JITed code:
// disassembled on x86-64, a hex dump elsewhere.
func Dump(id uint32, w io.Writer) error {
	prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if err != nil {
		return fmt.Errorf("open program %d: %w", id, err)
	}
	defer prog.Close()
	info, err := prog.Info()
	if err != nil {
		return fmt.Errorf("program %d info: %w", id, err)
	}
	insns, err := info.Instructions()
	if err != nil {
		return fmt.Errorf("program %d translated instructions: %w", id, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Program %d (%s %s): %d translated instructions\n", id, prog.Type(), info.Name, len(insns))
	fmt.Fprintf(&b, "%v\n", insns)
	code, ok := info.JitedInsns()
	switch {
	case !ok:
		b.WriteString("No JITed code: the JIT is off or the kernel does not show it\n")
	case runtime.GOARCH == "amd64":
		fmt.Fprintf(&b, "JITed code, %d bytes:\n", len(code))
		addrs, _ := info.JitedKsymAddrs()
		lens, _ := info.JitedFuncLens()
		funcs := splitFuncs(code, lens, addrs)
		for _, f := range funcs {
			if len(funcs) > 1 {
				fmt.Fprintf(&b, "function at %#x:\n", f.addr)
			}
			b.WriteString(disassemble(f.code, f.addr))
		}
	default:
		fmt.Fprintf(&b, "JITed code, %d bytes (no disassembler for %s, hex dump):\n", len(code), runtime.GOARCH)
		b.WriteString(hexDump(code))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// jited is one function of a program's JITed code, and where the kernel
// put it.
type jited struct {
	code []byte
	addr uint64
}

// splitFuncs cuts a program's JITed code into its functions, by the
// lengths and addresses the kernel gives; where it gives none, or they
// do not add up, the code is one function. The address is 0 where the
// kernel hides it.
func splitFuncs(code []byte, lens []uint32, addrs []uintptr) []jited {
	total := 0
	for _, n := range lens {
		total += int(n)
	}
	if len(lens) == 0 || total != len(code) || len(addrs) != len(lens) {
		f := jited{code: code}
		if len(addrs) > 0 {
			f.addr = uint64(addrs[0])
		}
		return []jited{f}
	}
	var funcs []jited
	for i, n := range lens {
		funcs = append(funcs, jited{code: code[:n], addr: uint64(addrs[i])})
		code = code[n:]
	}
	return funcs
}

// disassemble lists x86-64 code at addr an instruction a line, as
// objdump does: offset, bytes, AT&T syntax, with jump and call targets
// as addresses. Bytes that do not decode are shown as such and skipped
// one at a time.
func disassemble(code []byte, addr uint64) string {
	var b strings.Builder
	for off := 0; off < len(code); {
		inst, err := x86asm.Decode(code[off:], 64)
		if err != nil || inst.Len == 0 {
			fmt.Fprintf(&b, "%5x:  %-30s (bad)\n", off, fmt.Sprintf("%02x", code[off]))
			off++
			continue
		}
		raw := code[off : off+inst.Len]
		fmt.Fprintf(&b, "%5x:  %-30s %s\n", off, spaced(raw), x86asm.GNUSyntax(inst, addr+uint64(off), nil))
		off += inst.Len
	}
	return b.String()
}

// hexDump shows code 16 bytes a line, after the offset of the first.
func hexDump(code []byte) string {
	var b strings.Builder
	for off := 0; off < len(code); off += 16 {
		fmt.Fprintf(&b, "%5x:  %s\n", off, spaced(code[off:min(off+16, len(code))]))
	}
	return b.String()
}

// spaced is bytes in hex, separated by spaces.
func spaced(raw []byte) string {
	parts := make([]string, len(raw))
	for i, c := range raw {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, " ")
}

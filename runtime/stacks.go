package runtime

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"

	"gtrace/codegen"
	"gtrace/output"
	"gtrace/sema"
	"gtrace/symbol"
)

// userSymbols are the settings user stacks are symbolized by.
type userSymbols struct {
	debugInfo bool // show_debug_info: source lines and inlined calls
	// perProgram is cache_user_symbols = PER_PROGRAM: an address is
	// looked up in the process's executable first, or when the process
	// is gone in the binary of the probe that took the stack.
	perProgram bool
	targets    []string // each program's binary, by program index
}

func newUserSymbols(out *codegen.Output) userSymbols {
	s := userSymbols{debugInfo: out.ShowDebugInfo, perProgram: codegen.PerProgramSymbols(out.Settings)}
	for _, p := range out.Progs {
		s.targets = append(s.targets, p.Prog.Probe.Target)
	}
	return s
}

// stackMaps are the collection's stack maps, and dw_ustack's map of
// stacks, by name.
func stackMaps(coll *ebpf.Collection) map[string]*ebpf.Map {
	maps := map[string]*ebpf.Map{}
	for name, m := range coll.Maps {
		if m.Type() == ebpf.StackTrace || name == codegen.DwStacksMap {
			maps[name] = m
		}
	}
	return maps
}

// kernelStack decodes a kernel stack value: its id.
func (d *decoder) kernelStack(t *sema.Type, b []byte) output.Value {
	mode := d.stackMode(t)
	var frames []output.Frame
	for _, addr := range d.stackAddrs(t, int64(int32(le(b, 8)))) {
		frames = append(frames, output.Frame{Addr: addr, Sym: d.ksyms.SymOffset(addr), Func: d.ksyms.Sym(addr), Kernel: true})
	}
	if t.Trim {
		frames = trimTracing(frames)
	}
	return output.Stack(mode, limit(frames, t.Len))
}

// userStack decodes a user stack value: its id, the process id, and
// the index (plus one) of the program that took it, or 0.
func (d *decoder) userStack(t *sema.Type, b []byte) output.Value {
	id, pid, prog := int64(int32(le(b, 8))), uint32(le(b[8:], 4)), int(le(b[12:], 4))
	mode := d.stackMode(t)
	if mode == output.StackBuildID {
		return output.Stack(mode, d.buildIDFrames(t, id))
	}
	var frames []output.Frame
	for _, addr := range limit(d.stackAddrs(t, id), t.Len) {
		if mode == output.StackRaw {
			frames = append(frames, output.Frame{Addr: addr, Func: hexAddr(addr)})
			continue
		}
		frames = append(frames, d.userFrame(pid, prog, addr, mode == output.StackPerf)...)
	}
	return output.Stack(mode, frames)
}

// limit keeps the first n of a stack's frames; 0 keeps them all.
func limit[T any](frames []T, n int) []T {
	if n > 0 && len(frames) > n {
		return frames[:n]
	}
	return frames
}

// stackAddrs reads the addresses of the stack with the given id from
// the stack map of type t.
func (d *decoder) stackAddrs(t *sema.Type, id int64) []uint64 {
	raw := d.stackBytes(t, id)
	var addrs []uint64
	for i := 0; i+8 <= len(raw); i += 8 {
		addr := binary.LittleEndian.Uint64(raw[i:])
		if addr == 0 {
			break
		}
		addrs = append(addrs, addr)
	}
	return addrs
}

// stackBytes is the value of stack id in the stack map of type t, or
// in dw_ustack's map, or nil.
func (d *decoder) stackBytes(t *sema.Type, id int64) []byte {
	name, _, _ := codegen.StackMap(t)
	if id >= codegen.DwStackMark {
		name = codegen.DwStacksMap
	}
	m := d.stacks[name]
	if id < 0 || m == nil {
		return nil
	}
	raw, err := m.LookupBytes(uint32(id))
	if err != nil {
		return nil
	}
	return raw
}

// buildIDFrames formats the frames of a build-id stack as bpftrace
// does: the build id in hex and the file offset, or the address where
// the file had no build id.
func (d *decoder) buildIDFrames(t *sema.Type, id int64) []output.Frame {
	raw := d.stackBytes(t, id)
	var frames []output.Frame
	for i := 0; i+codegen.BuildIDFrameSize <= len(raw); i += codegen.BuildIDFrameSize {
		f := raw[i : i+codegen.BuildIDFrameSize]
		status, off := int32(binary.LittleEndian.Uint32(f)), binary.LittleEndian.Uint64(f[24:])
		switch status {
		case 0: // the end of the stack
			return frames
		case 1:
			sym := fmt.Sprintf("%s 0x%02x", hex.EncodeToString(f[4:24]), off)
			frames = append(frames, output.Frame{Sym: sym, Func: sym})
		default:
			sym := fmt.Sprintf("%x", off)
			frames = append(frames, output.Frame{Sym: sym, Func: sym})
		}
	}
	return limit(frames, t.Len)
}

// userFrame symbolizes a user address as bpftrace prints it: one line,
// or with show_debug_info one per inlined call and the function's.
func (d *decoder) userFrame(pid uint32, prog int, addr uint64, perf bool) []output.Frame {
	fr, ok := d.perProgramFrame(pid, prog, addr)
	if !ok {
		fr, ok = d.usyms.Frame(pid, addr)
	}
	if !ok {
		sym := hexAddr(addr)
		if perf {
			sym += " ([unknown])"
		}
		return []output.Frame{{Addr: addr, Sym: sym, Func: hexAddr(addr)}}
	}
	var info symbol.LineInfo
	var lines bool
	if d.syms.debugInfo {
		info, lines = symbol.Lines(fr.Path, fr.Vaddr)
	}
	var frames []output.Frame
	for _, in := range info.Inlined {
		sym := "[inlined] " + in.Name + at(in.At)
		if perf {
			sym = in.Name + " (inlined)"
		}
		frames = append(frames, output.Frame{Addr: addr, Sym: sym, Func: in.Name, File: fr.Path})
	}
	sym := fmt.Sprintf("%s+%d", fr.Name, fr.Offset)
	switch {
	case perf:
		sym += " (" + fr.Path + ")"
	case lines:
		sym += at(info.At)
	}
	return append(frames, output.Frame{Addr: addr, Sym: sym, Func: fr.Name, File: fr.Path})
}

// hexAddr is an address no symbol covers, as bpftrace prints it.
func hexAddr(addr uint64) string { return fmt.Sprintf("%#x", addr) }

// at is a source place as a frame shows it, or "" when unknown.
func at(l symbol.SourceLine) string {
	if l.File == "" {
		return ""
	}
	return fmt.Sprintf("@%s:%d", l.File, l.Line)
}

// perProgramFrame looks addr up in the executable of process pid or,
// when it is gone, in the binary of program prog's probe, by symbol
// table alone, under cache_user_symbols = PER_PROGRAM.
func (d *decoder) perProgramFrame(pid uint32, prog int, addr uint64) (symbol.UserFrame, bool) {
	if !d.syms.perProgram {
		return symbol.UserFrame{}, false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || strings.HasSuffix(exe, " (deleted)") {
		exe = ""
		if prog > 0 && prog <= len(d.syms.targets) {
			exe = d.syms.targets[prog-1]
		}
	}
	if exe == "" {
		return symbol.UserFrame{}, false
	}
	name, off, ok := symbol.ELFSymbol(exe, addr)
	return symbol.UserFrame{Name: name, Offset: off, Path: exe, Vaddr: addr}, ok
}

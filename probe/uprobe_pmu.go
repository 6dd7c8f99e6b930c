package probe

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"gtrace/symbol"
)

// unsafeHint follows an error that --unsafe lets through, in bpftrace's
// words.
const unsafeHint = "\nUse --unsafe to force attachment. WARNING: This option could lead to data corruption in the target process."

// uprobeOffset is where in its file p goes: its function's start plus
// its offset, or its address. It checks, as bpftrace does, that the
// place is inside a function; --unsafe (Probe.Unsafe) lets a function
// of unknown size, or an address in no function, through.
func uprobeOffset(p *Probe) (uint64, error) {
	fn, off := p.Event, p.Offset
	if fn == "" {
		sym, ok, err := symbol.FuncAt(p.Target, p.Address)
		switch {
		case (err != nil || !ok) && !p.Unsafe:
			return 0, fmt.Errorf("Could not resolve address: %s:%#x", p.Target, p.Address)
		case err != nil || !ok:
			if !symbol.IsELF(p.Target) {
				return p.Address, nil // code with no headers: addresses are offsets
			}
			return symbol.FileOffset(p.Target, p.Address)
		}
		fn, off = sym.Name, p.Address-sym.Value
	}
	sym, ok, err := symbol.LookupFunc(p.Target, fn)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("Could not resolve symbol: %s:%s", p.Target, fn)
	}
	if p.Kind == Uretprobe && off != 0 {
		return 0, fmt.Errorf("uretprobes cannot be attached at function offset. (address resolved to: %s+%d)", fn, off)
	}
	if sym.Size == 0 && off == 0 {
		if !p.Unsafe {
			return 0, fmt.Errorf("Could not determine boundary for %s (symbol has size 0).%s", fn, unsafeHint)
		}
	} else if off >= sym.Size {
		return 0, fmt.Errorf("Offset outside the function bounds ('%s' size is %d)", fn, sym.Size)
	}
	return sym.FileOffset + off, nil
}

// openProbe makes a uprobe (pmu "uprobe") at offset in the file
// target, or a kprobe (pmu "kprobe") at the address offset when target
// is "", through the kernel's PMU of that name, and attaches prog to it
// by a BPF link, which holds the event. ret makes a return probe. pid,
// when not 0, limits it to that process. Unlike cilium/ebpf's
// Executable, it takes any offset, 0 too, where a flat binary starts,
// and kprobes by address.
func openProbe(pmu, target string, offset uint64, ret bool, pid int, prog *ebpf.Program) (link.Link, error) {
	typ, err := readPMU(pmu, "type", "%d")
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("this kernel has no %ss: %w", pmu, err)
	}
	if err != nil {
		return nil, err
	}
	var config uint64
	if ret {
		bit, err := readPMU(pmu, "format/retprobe", "config:%d")
		if err != nil {
			return nil, err
		}
		config = 1 << bit
	}
	var cpath *byte
	if target != "" {
		if cpath, err = unix.BytePtrFromString(target); err != nil {
			return nil, err
		}
	}
	attr := unix.PerfEventAttr{
		Type:   uint32(typ),
		Size:   unix.PERF_ATTR_SIZE_VER1, // config2 is the last field used
		Config: config,
		Ext1:   uint64(uintptr(unsafe.Pointer(cpath))),
		Ext2:   offset,
	}
	tid, cpu := -1, 0
	if pid != 0 {
		tid, cpu = pid, -1
	}
	fd, err := unix.PerfEventOpen(&attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	goruntime.KeepAlive(cpath)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open %s %s:%#x: %w", pmu, target, offset, err)
	}
	l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
	unix.Close(fd)
	return l, err
}

// readPMU reads a number from a file of a PMU, such as its type.
func readPMU(pmu, file, format string) (uint64, error) {
	path := "/sys/bus/event_source/devices/" + pmu + "/" + file
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var n uint64
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), format, &n); err != nil {
		return 0, fmt.Errorf("%s: %q: %w", path, b, err)
	}
	return n, nil
}

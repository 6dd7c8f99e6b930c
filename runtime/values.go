package runtime

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"

	"gtrace/output"
	"gtrace/sema"
	"gtrace/symbol"
)

// decoder turns bytes written by generated code back into values.
type decoder struct {
	stacks map[string]*ebpf.Map // kernel and user stacks by id, by stack map name
	ksyms  *symbol.Kernel
	usyms  *symbol.User
	// boot is the wall clock time of boot, for strftime().
	boot time.Time
	// maxStrlen bounds a strftime() result, as max_strlen does.
	maxStrlen int
	// trailer follows a string of max_strlen bytes with no NUL, as
	// str() leaves one it cut short (str_trunc_trailer).
	trailer string
	// defaultStack is how stacks print unless their call names a
	// mode (stack_mode).
	defaultStack string
	// syms are the settings user stacks are symbolized by.
	syms userSymbols
}

// bootTime is the wall clock time at which CLOCK_BOOTTIME was zero.
func bootTime() (time.Time, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return time.Time{}, fmt.Errorf("read the boot clock: %w", err)
	}
	return time.Now().Add(-time.Duration(ts.Nano())), nil
}

func (d *decoder) value(t *sema.Type, b []byte) output.Value {
	switch t.Kind {
	case sema.Int:
		v := le(b, t.Size)
		if name := t.EnumName(v); name != "" {
			return output.Sym(name, v)
		}
		if t.Signed {
			// Sign-extend from the type's width.
			sh := 64 - 8*uint(t.Size)
			return output.Int(int64(v<<sh) >> sh)
		}
		return output.Uint(v)
	case sema.Bool:
		return output.Bool(le(b, t.Size) != 0)
	case sema.String:
		i := bytes.IndexByte(b[:t.Size], 0)
		switch {
		case i >= 0:
			return output.Str(string(b[:i]))
		case t.Size == d.maxStrlen:
			return output.Str(string(b[:t.Size]) + d.trailer)
		}
		return output.Str(string(b[:t.Size]))
	case sema.Tuple:
		offs := t.Offsets()
		elems := make([]output.Value, len(t.Elems))
		for i, et := range t.Elems {
			elems[i] = d.value(et, b[offs[i]:])
		}
		if t.Names != nil {
			fields := make([]output.Field, len(elems))
			for i, v := range elems {
				fields[i] = output.Field{Name: t.Names[i], Value: v}
			}
			return output.Record(fields...)
		}
		return output.Tuple(elems...)
	case sema.Ksym:
		addr := le(b, 8)
		return output.Sym(d.ksyms.Sym(addr), addr)
	case sema.KStack:
		return d.kernelStack(t, b)
	case sema.UStack:
		return d.userStack(t, b)
	case sema.Usym:
		addr, pid := le(b, 8), uint32(le(b[8:], 4))
		if name, _, ok := d.usyms.Resolve(pid, addr); ok {
			return output.Sym(name, addr)
		}
		return output.Sym(fmt.Sprintf("%#x", addr), addr)
	case sema.Timestamp:
		at := d.boot.Add(time.Duration(le(b, 8)))
		return output.Str(output.Strftime(t.Format, at, d.maxStrlen))
	case sema.Buffer:
		n := min(int(le(b, 8)), t.Size-8)
		return output.Buffer(b[8 : 8+n])
	case sema.Inet:
		return output.Str(inet(le(b, 8), b[8:24]))
	case sema.MacAddr:
		return output.Str(macAddr(b))
	case sema.CgroupPath:
		return output.Str(cgroupPath(le(b, 8), t.Format))
	case sema.Pointer:
		return output.Pointer(le(b, 8))
	case sema.Void:
		return output.Value{} // a float's none, printed as null
	case sema.Record:
		var fields []output.Field
		for _, f := range sema.Fields(t) {
			v := d.value(f.Type, b[f.Offset:])
			if f.BitSize > 0 {
				n := le(b[f.Offset:], (f.BitOffset+f.BitSize+7)/8) >> f.BitOffset & (1<<f.BitSize - 1)
				v = output.Uint(n)
			}
			fields = append(fields, output.Field{Name: f.Name, Value: v})
		}
		return output.Record(fields...)
	case sema.Array:
		et := t.Elems[0]
		elems := make([]output.Value, t.Len)
		for i := range elems {
			elems[i] = d.value(et, b[i*et.Size:])
		}
		return output.Array(elems...)
	}
	return output.Str("")
}

// stackMode is how a stack of type t prints: kstack(perf), ustack(raw),
// or as the stack_mode setting says.
func (d *decoder) stackMode(t *sema.Type) output.StackMode {
	mode := t.Format
	if mode == "" {
		mode = d.defaultStack
	}
	switch mode {
	case "perf":
		return output.StackPerf
	case "raw":
		return output.StackRaw
	case "build_id":
		return output.StackBuildID
	}
	return output.StackBpftrace
}

// trimTracing drops the frames a stack taken in a raw tracepoint program
// starts with: the program, the BPF trampoline into it, the tracepoint's
// iterator. What remains starts where the traced event happened.
func trimTracing(frames []output.Frame) []output.Frame {
	for len(frames) > 0 {
		s := frames[0].Sym
		if !strings.HasPrefix(s, "bpf_prog_") && !strings.HasPrefix(s, "bpf_trace_run") &&
			!strings.HasPrefix(s, "__bpf_trace_") && !strings.HasPrefix(s, "__traceiter_") {
			break
		}
		frames = frames[1:]
	}
	return frames
}

// le reads a little-endian unsigned integer of n bytes.
func le(b []byte, n int) uint64 {
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// inet formats an address of family af as inet_ntop does.
func inet(af uint64, addr []byte) string {
	switch af {
	case unix.AF_INET:
		return netip.AddrFrom4([4]byte(addr[:4])).String()
	case unix.AF_INET6:
		return netip.AddrFrom16([16]byte(addr[:16])).String()
	}
	return ""
}

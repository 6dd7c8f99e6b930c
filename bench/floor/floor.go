package floor

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"gtrace/kernel"
	"gtrace/symbol"
)

// Options says how to attach the floors.
type Options struct {
	Kprobes bool      // vfs_read kprobes instead of the syscall tracepoints
	Libc    string    // path of the libc whose __read scripts 06 and 07 probe
	Output  io.Writer // where script 18's lines go; nil: io.Discard
}

// Tracer is one loaded and attached floor.
type Tracer struct {
	progs  []*ebpf.Program
	links  []link.Link
	maps   map[string]*ebpf.Map // by role: counts, hist, start, stacks, events, lost
	reader *ringbuf.Reader
	done   chan struct{} // closed when the reader's goroutine returns
	rdErr  error         // why the reader stopped, read after done
}

// formats are script 18's printf formats, by the id its records carry.
var formats = []string{formatBytes: "%d bytes\n"}

const formatBytes = 0

// ptRegsDX is the offset of dx, the third argument, in x86-64's pt_regs.
const ptRegsDX = 96

// Load loads and attaches the floor of script n (1..18).
func Load(n int, opts Options) (*Tracer, error) {
	if n < 1 || n > Scripts {
		return nil, fmt.Errorf("floor: no script %d, they are 1 to %d", n, Scripts)
	}
	if opts.Output == nil {
		opts.Output = io.Discard
	}
	t := &Tracer{maps: map[string]*ebpf.Map{}}
	b := &builder{t: t, opts: opts}
	probes, err := floors[n](b)
	if err == nil {
		err = t.attach(probes, opts)
	}
	if err == nil && t.maps["events"] != nil {
		err = t.startReader(opts.Output)
	}
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("floor of script %02d: %w", n, err)
	}
	return t, nil
}

// attach loads each program and attaches it.
func (t *Tracer) attach(probes []probe, opts Options) error {
	for _, p := range probes {
		at := p.at
		if !opts.Kprobes {
			switch at {
			case readEntry:
				at = sysEnter
			case readReturn:
				at = sysExit
			}
		}
		typ := ebpf.Kprobe
		if at == sysEnter || at == sysExit {
			typ = ebpf.TracePoint
		}
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name:         p.name,
			Type:         typ,
			Instructions: p.insns,
			License:      "GPL", // bpf_get_stackid is GPL-only
		})
		if err != nil {
			return fmt.Errorf("load %s: %w", p.name, err)
		}
		t.progs = append(t.progs, prog)
		l, err := attachTo(at, prog, opts.Libc)
		if err != nil {
			return fmt.Errorf("attach %s: %w", p.name, err)
		}
		t.links = append(t.links, l)
	}
	return nil
}

func attachTo(at point, prog *ebpf.Program, libc string) (link.Link, error) {
	switch at {
	case readEntry:
		return link.Kprobe("vfs_read", prog, nil)
	case readReturn:
		return link.Kretprobe("vfs_read", prog, nil)
	case sysEnter:
		return link.Tracepoint("syscalls", "sys_enter_read", prog, nil)
	case sysExit:
		return link.Tracepoint("syscalls", "sys_exit_read", prog, nil)
	}
	if libc == "" {
		return nil, errors.New("Options.Libc is not set")
	}
	ex, err := link.OpenExecutable(libc)
	if err != nil {
		return nil, err
	}
	if at == libcEntry {
		return ex.Uprobe("__read", prog, nil)
	}
	return ex.Uretprobe("__read", prog, nil)
}

// startReader drains script 18's ring buffer in a goroutine, formatting
// each record onto w, as a tracer's user space does.
func (t *Tracer) startReader(w io.Writer) error {
	rd, err := ringbuf.NewReader(t.maps["events"])
	if err != nil {
		return fmt.Errorf("ring buffer reader: %w", err)
	}
	t.reader, t.done = rd, make(chan struct{})
	go func() {
		defer close(t.done)
		t.rdErr = drain(rd, w)
	}()
	return nil
}

// pollInterval is how often the reader looks for records, which script
// 18 writes without waking it: the 1 MiB ring holds about 40,000, some
// 15 ms of dd's reads.
const pollInterval = time.Millisecond

// drain formats records until Close flushes the reader; ErrFlushed comes
// after the records that were in the ring then.
func drain(rd *ringbuf.Reader, w io.Writer) error {
	var rec ringbuf.Record
	for {
		rd.SetDeadline(time.Now().Add(pollInterval))
		err := rd.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if errors.Is(err, ringbuf.ErrFlushed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the ring buffer: %w", err)
		}
		if len(rec.RawSample) < recordSize {
			return fmt.Errorf("a record of %d bytes, want %d", len(rec.RawSample), recordSize)
		}
		id := binary.NativeEndian.Uint64(rec.RawSample)
		if id >= uint64(len(formats)) {
			return fmt.Errorf("a record of unknown format %d", id)
		}
		arg := int64(binary.NativeEndian.Uint64(rec.RawSample[8:]))
		if _, err := fmt.Fprintf(w, formats[id], arg); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
}

// Programs returns the attached programs, whose run_time_ns and run_cnt
// measure the floor. Script 1 has none.
func (t *Tracer) Programs() []*ebpf.Program {
	return t.progs
}

// Lost returns the events script 18 could not deliver; 0 for the others.
func (t *Tracer) Lost() (uint64, error) {
	m := t.maps["lost"]
	if m == nil {
		return 0, nil
	}
	var perCPU []uint64
	if err := m.Lookup(uint32(0), &perCPU); err != nil {
		return 0, fmt.Errorf("read lost events: %w", err)
	}
	var sum uint64
	for _, v := range perCPU {
		sum += v
	}
	return sum, nil
}

// Close detaches and unloads everything, and stops the reader once it
// has formatted what the ring buffer held.
func (t *Tracer) Close() error {
	var errs []error
	for _, l := range t.links {
		errs = append(errs, l.Close())
	}
	t.links = nil
	if t.reader != nil {
		if err := t.reader.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("flush the ring buffer: %w", err))
			// Without a flush the reader only stops when closed.
			errs = append(errs, t.reader.Close())
			<-t.done
		} else {
			<-t.done
			errs = append(errs, t.reader.Close())
		}
		errs = append(errs, t.rdErr)
		t.reader = nil
	}
	for _, p := range t.progs {
		errs = append(errs, p.Close())
	}
	t.progs = nil
	for role, m := range t.maps {
		errs = append(errs, m.Close())
		delete(t.maps, role)
	}
	return errors.Join(errs...)
}

// builder creates the maps of a floor, and finds where arg2 is.
type builder struct {
	t    *Tracer
	opts Options
}

func (b *builder) newMap(role string, typ ebpf.MapType, key, value, entries uint32) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "floor_" + role,
		Type:       typ,
		KeySize:    key,
		ValueSize:  value,
		MaxEntries: entries,
	})
	if err != nil {
		return nil, fmt.Errorf("create map %s: %w", role, err)
	}
	b.t.maps[role] = m
	return m, nil
}

// stacks creates the stack trace map, shared by kernel and user stacks.
func (b *builder) stacks() (*ebpf.Map, error) {
	return b.newMap("stacks", ebpf.StackTrace, 4, stackDepth*8, mapEntries)
}

// arg2 returns the offset of arg2 in the context of readEntry's
// program: pt_regs' dx for a kprobe, else sys_enter_read's count, whose
// offset the tracepoint's format gives.
func (b *builder) arg2() (int16, error) {
	if b.opts.Kprobes {
		return ptRegsDX, nil
	}
	f, err := kernel.TracepointFormat("syscalls", "sys_enter_read")
	if err != nil {
		return 0, err
	}
	for _, field := range f.Fields {
		if field.Name == "count" {
			if field.Size != 8 {
				return 0, fmt.Errorf("sys_enter_read's count has %d bytes, want 8", field.Size)
			}
			return int16(field.Offset), nil
		}
	}
	return 0, errors.New("sys_enter_read has no field count")
}

// Libc returns the path of the libc that dd uses: the libc.so among its
// needed libraries, found in the loader's directories.
func Libc() (string, error) {
	dd, err := exec.LookPath("dd")
	if err != nil {
		return "", err
	}
	f, err := elf.Open(dd)
	if err != nil {
		return "", fmt.Errorf("find dd's libc: %w", err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return "", fmt.Errorf("find dd's libc: %s: %w", dd, err)
	}
	for _, lib := range libs {
		if strings.HasPrefix(lib, "libc.so") {
			return symbol.ResolveBinary(lib)
		}
	}
	return "", fmt.Errorf("find dd's libc: %s needs no libc.so (%s)", dd, strings.Join(libs, ", "))
}

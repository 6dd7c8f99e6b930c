package probe

import (
	"errors"
	"fmt"
	"gtrace/lang/token"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"gtrace/kernel"
)

// interval, profile, software and hardware probes are perf events with a
// BPF program attached through a BPF link (BPF_LINK_CREATE on the perf
// event fd). The link holds the event, so the fd is closed at once and the
// event dies with the link.
func init() {
	register(&provider{kind: Interval, names: []string{"interval", "i"},
		progType: ebpf.PerfEvent, context: PerfSample,
		parse: timed(Interval, "interval"), attach: attachPerf,
		list: &listing{explicit: true, counted: true, probes: timeUnits}})
	register(&provider{kind: Profile, names: []string{"profile", "p"},
		progType: ebpf.PerfEvent, context: PerfSample,
		parse: timed(Profile, "profile"), attach: attachPerf,
		list: &listing{explicit: true, counted: true, probes: timeUnits}})
	register(&provider{kind: Software, names: []string{"software", "s"},
		progType: ebpf.PerfEvent, context: PerfSample,
		parse: counted(Software, "software"), attach: attachPerf,
		list: &listing{counted: true, probes: perfEvents(kernel.SoftwareEvents)}})
	register(&provider{kind: Hardware, names: []string{"hardware", "h"},
		progType: ebpf.PerfEvent, context: PerfSample,
		parse: counted(Hardware, "hardware"), attach: attachPerf,
		list: &listing{counted: true, probes: perfEvents(kernel.HardwareEvents)}})
}

// perfEvents lists an event table the way bpftrace does: every name and
// alias, followed by an empty count.
func perfEvents(table []kernel.PerfEvent) func(*lister) ([]string, error) {
	return func(*lister) ([]string, error) {
		var out []string
		for _, ev := range table {
			out = append(out, ev.Name+":")
			if ev.Alias != "" {
				out = append(out, ev.Alias+":")
			}
		}
		return out, nil
	}
}

// timeUnits lists the units of interval and profile probes as bpftrace
// v0.26 does, each with an empty rate: "hz:", "ms:", "s:", "us:".
func timeUnits(*lister) ([]string, error) {
	return []string{"hz:", "ms:", "s:", "us:"}, nil
}

var unitNanos = map[string]uint64{"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1}

// maxPeriod is the longest sample period perf_event_open takes: it
// refuses one with the top bit set.
const maxPeriod = math.MaxInt64

// maxSampleRate reads the highest sampling frequency the kernel allows,
// which it lowers itself when sampling takes too long.
func maxSampleRate() (uint64, bool) {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_max_sample_rate")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// timed parses "UNIT:N" and "NUNIT" (interval:s:1, interval:1s, profile:hz:99).
func timed(k Kind, name string) func([]string, *Env) ([]Probe, error) {
	return func(parts []string, _ *Env) ([]Probe, error) {
		var unit, num string
		switch len(parts) {
		case 2:
			unit, num = parts[0], parts[1]
		case 1:
			i := strings.IndexFunc(parts[0], func(r rune) bool { return r < '0' || r > '9' })
			if i <= 0 {
				return nil, fmt.Errorf("%s probe must have the form %s:UNIT:N or %s:NUNIT", name, name, name)
			}
			num, unit = parts[0][:i], parts[0][i:]
		default:
			return nil, fmt.Errorf("%s probe must have the form %s:UNIT:N or %s:NUNIT", name, name, name)
		}
		n, err := token.ParseInt(num)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%s probe: invalid rate %q", name, num)
		}
		p := Probe{Kind: k, Name: name + ":" + unit + ":" + strconv.FormatUint(n, 10), Event: "cpu-clock"}
		if unit == "hz" {
			if limit, ok := maxSampleRate(); ok && n > limit {
				return nil, fmt.Errorf("%s probe: %d Hz is above the kernel's limit of %d Hz (kernel.perf_event_max_sample_rate)", name, n, limit)
			}
			p.Freq = n
		} else if ns, ok := unitNanos[unit]; ok {
			if n > maxPeriod/ns {
				return nil, fmt.Errorf("%s probe: a period of %d %s is too long: the kernel takes at most %d %s", name, n, unit, maxPeriod/ns, unit)
			}
			p.Period = n * ns
		} else {
			return nil, fmt.Errorf("%s probe: invalid unit %q (want s, ms, us, ns or hz)", name, unit)
		}
		return []Probe{p}, nil
	}
}

// counted parses "EVENT[:COUNT]" for software and hardware events.
func counted(k Kind, name string) func([]string, *Env) ([]Probe, error) {
	return func(parts []string, _ *Env) ([]Probe, error) {
		if len(parts) < 1 || len(parts) > 2 {
			return nil, fmt.Errorf("%s probe must have the form %s:EVENT[:COUNT]", name, name)
		}
		ev, _, ok := lookupPerfEvent(k, parts[0])
		if !ok {
			return nil, fmt.Errorf("%s probe: unknown event %q", name, parts[0])
		}
		p := Probe{Kind: k, Name: name + ":" + parts[0], Event: ev.Name, Period: ev.DefaultPeriod}
		if len(parts) == 2 {
			n, err := token.ParseInt(parts[1])
			if err != nil || n == 0 {
				return nil, fmt.Errorf("%s probe: invalid count %q", name, parts[1])
			}
			if n > maxPeriod {
				return nil, fmt.Errorf("%s probe: a count of %d is too large: the kernel takes at most %d", name, n, uint64(maxPeriod))
			}
			p.Period = n
			p.Name += ":" + strconv.FormatUint(n, 10)
		}
		return []Probe{p}, nil
	}
}

func attachPerf(p *Probe, prog *ebpf.Program, _ int) ([]link.Link, error) {
	typ, config := uint32(unix.PERF_TYPE_SOFTWARE), uint64(unix.PERF_COUNT_SW_CPU_CLOCK)
	if p.Kind == Software || p.Kind == Hardware {
		ev, t, _ := lookupPerfEvent(p.Kind, p.Event)
		typ, config = t, ev.Config
	}
	attr := unix.PerfEventAttr{
		Type:   typ,
		Config: config,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: p.Period,
	}
	if p.Freq != 0 {
		attr.Sample = p.Freq
		attr.Bits |= unix.PerfBitFreq
	}
	cpus := []int{0} // an interval fires on one CPU only
	if p.Kind != Interval {
		var err error
		if cpus, err = kernel.OnlineCPUs(); err != nil {
			return nil, err
		}
	}
	var links []link.Link
	for _, cpu := range cpus {
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			closeLinks(links)
			if p.Kind == Hardware && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP)) {
				return nil, fmt.Errorf("this machine has no hardware performance counters for %s (perf_event_open: %w)", p.Event, err)
			}
			return nil, fmt.Errorf("perf_event_open on cpu %d: %w", cpu, err)
		}
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
		unix.Close(fd)
		if err != nil {
			closeLinks(links)
			return nil, err
		}
		links = append(links, l)
	}
	return links, nil
}

func closeLinks(links []link.Link) {
	for _, l := range links {
		l.Close()
	}
}

// lookupPerfEvent finds a software or hardware event by name or alias.
func lookupPerfEvent(k Kind, name string) (kernel.PerfEvent, uint32, bool) {
	if k == Hardware {
		ev, ok := kernel.LookupPerfEvent(kernel.HardwareEvents, name)
		return ev, unix.PERF_TYPE_HARDWARE, ok
	}
	ev, ok := kernel.LookupPerfEvent(kernel.SoftwareEvents, name)
	return ev, unix.PERF_TYPE_SOFTWARE, ok
}

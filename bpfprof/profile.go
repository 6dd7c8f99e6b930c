package bpfprof

import (
	"fmt"
	"io"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"gtrace/bpfstat"
)

// Options shape a profile.
type Options struct {
	Program bpfstat.Program
	// Duration is how long to profile; 0 means until Done.
	Duration time.Duration
	// Done ends the profile early.
	Done <-chan struct{}
	// Errs gets the line saying the window has begun.
	Errs io.Writer
}

// Profile measures the program for the window: with fentry and fexit
// where the kernel allows them, and always by the kernel's statistics,
// which are on only while Profile holds a BPF_ENABLE_STATS descriptor.
func Profile(opts Options) (*Report, error) {
	r := &Report{Program: target(opts.Program), StatsWereOn: bpfstat.StatsOn()}
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		return nil, fmt.Errorf("enable BPF statistics: %w", err)
	}
	defer stats.Close()
	prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(opts.Program.ID))
	if err != nil {
		return nil, fmt.Errorf("open program %d: %w", opts.Program.ID, err)
	}
	defer prog.Close()
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("count CPUs: %w", err)
	}

	ev, notes, err := openCounters(ncpu)
	if err != nil {
		return nil, err
	}
	defer ev.close()
	r.HardwarePMU = ev.noPMU == ""
	r.NoPMUReason = ev.noPMU
	r.Notes = notes
	p, err := attachProbes(prog, ev, ncpu)
	if err != nil {
		r.FentryUnavailable = err.Error()
	} else {
		defer p.close()
	}

	before, err := sample(prog, p)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	window := "until Ctrl-C"
	if opts.Duration > 0 {
		window = "for " + opts.Duration.String()
	}
	fmt.Fprintf(opts.Errs, "Profiling program %d (%s) %s...\n", opts.Program.ID, opts.Program.Name, window)
	var timeout <-chan time.Time
	if opts.Duration > 0 {
		timeout = time.After(opts.Duration)
	}
	select {
	case <-opts.Done:
	case <-timeout:
	}
	after, err := sample(prog, p)
	if err != nil {
		return nil, err
	}
	r.DurationNs = time.Since(start).Nanoseconds()
	r.Kernel = runs(after.kernel.RunCount-before.kernel.RunCount,
		uint64(after.kernel.Runtime-before.kernel.Runtime))
	if p != nil {
		r.Fentry = measured(before.probes, after.probes, ev.names())
		r.Profiler = ownRuns(before, after)
	}
	return r, nil
}

// point is the kernel's statistics of the target and of the fentry and
// fexit programs, and the probes' totals, at one time.
type point struct {
	kernel, entry, exit ebpf.ProgramStats
	probes              totals
}

// ownRuns is what the kernel counted for the fentry and fexit programs
// between two points: the runs of fentry, and the time of both, which
// the kernel's figure for the target includes.
func ownRuns(before, after point) *Runs {
	ns := after.entry.Runtime - before.entry.Runtime + after.exit.Runtime - before.exit.Runtime
	r := runs(after.entry.RunCount-before.entry.RunCount, uint64(ns))
	return &r
}

// sample reads the kernel's statistics and the probes' totals together:
// it reads both twice until neither moved between the reads, so that the
// two count the same runs. A program that never stops running gets the
// last reading.
func sample(prog *ebpf.Program, p *probes) (point, error) {
	var last point
	for try := 0; try < 100; try++ {
		var pt [2]point
		for i := range pt {
			st, err := prog.Stats()
			if err != nil {
				return point{}, fmt.Errorf("read run statistics: %w", err)
			}
			pt[i].kernel = *st
			if p != nil {
				if pt[i].probes, err = p.read(); err != nil {
					return point{}, err
				}
				if pt[i].entry, pt[i].exit, err = p.stats(); err != nil {
					return point{}, err
				}
			}
		}
		if pt[0] == pt[1] {
			return pt[1], nil
		}
		last = pt[1]
	}
	return last, nil
}

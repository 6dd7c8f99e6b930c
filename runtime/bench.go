package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"gtrace/codegen"
	"gtrace/probe"
)

// errBenchOnly is bpftrace's error for a script whose only probes are
// benchmarks, run without --mode bench.
var errBenchOnly = errors.New("No probes attached; use --bench to run benchmark probes.")

// probesOf returns the programs of the script's probes of kind, in the
// script's order, and their names: the benchmarks or the tests.
func (r *run) probesOf(kind probe.Kind) ([]*codegen.Program, []string) {
	var progs []*codegen.Program
	var names []string
	for _, p := range r.out.Progs {
		if p.Prog.Probe.Kind == kind {
			progs = append(progs, p)
			names = append(names, p.Prog.Probe.Target)
		}
	}
	return progs, names
}

// bench runs the script in bench mode, as bpftrace's --mode bench: BEGIN,
// then each bench probe in the script's order, measured and printed,
// then END. Nothing is attached, and maps are not printed at exit. A
// benchmark that exits with a non-zero code fails the run.
func (r *run) bench() (int, error) {
	if err := r.runSpecial(probe.Begin); err != nil {
		return 1, err
	}
	if err := r.drain(); err != nil {
		return 1, err
	}
	benches, names := r.probesOf(probe.Bench)
	code := 0
	for i, p := range benches {
		ok, err := r.benchmark(names, i, p)
		if err != nil {
			return 1, err
		}
		if !ok {
			fmt.Fprintf(r.opts.Stderr, "ERROR: Benchmark '%s' failed.\n", names[i])
			code = 1
		}
	}
	// What the benchmarks sent was dropped, and so may what the ring
	// buffer refused of it be.
	r.lostSeen = r.sumCounter("lost", 0)
	r.exit = false
	if err := r.runSpecial(probe.End); err != nil {
		return 1, err
	}
	if err := r.drain(); err != nil {
		return 1, err
	}
	return code, r.flush()
}

// benchData is the packet a benchmark's XDP program runs on: the kernel
// wants at least an Ethernet header.
var benchData = make([]byte, 14)

// benchmark runs benchmark i of names, more times over until the runs
// take a millisecond, as bpftrace does, and prints the kernel's mean
// time per run. It reports false if a run exited with a non-zero code; a
// benchmark that returns non-zero is skipped.
func (r *run) benchmark(names []string, i int, p *codegen.Program) (bool, error) {
	iters := 1
	for {
		ret, mean, err := r.progs[p.Name].Benchmark(benchData, iters, nil)
		if err != nil {
			return false, fmt.Errorf("run %s: %w", p.Prog.Probe.Name, err)
		}
		failed, err := r.discardEvents()
		if err != nil {
			return false, err
		}
		total := mean * time.Duration(iters)
		switch {
		case failed:
			return false, nil
		case ret != 0:
			return true, nil // skipped by returning non-zero, as in bpftrace
		case total < time.Microsecond:
			iters *= 1000
		case total < 10*time.Microsecond:
			iters *= 100
		case total < 100*time.Microsecond:
			iters *= 10
		case total < time.Millisecond:
			iters *= 2
		default:
			return true, r.opts.Printer.BenchResult(names, i, mean, uint64(iters))
		}
	}
}

// discardEvents reads and drops the events in the ring buffer, as
// bpftrace discards a benchmark's output, and reports whether one was an
// exit() with a non-zero code.
func (r *run) discardEvents() (bool, error) {
	failed := false
	var rec ringbuf.Record
	for r.rd.AvailableBytes() > 0 {
		r.rd.SetDeadline(time.Now())
		if err := r.rd.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return false, fmt.Errorf("read events: %w", err)
		}
		failed = failed || r.exitCodeOf(rec.RawSample) != 0
	}
	return failed, nil
}

// exitCodeOf is the code of an exit() event, 0 for any other event.
func (r *run) exitCodeOf(rec []byte) int64 {
	if len(rec) < 8 {
		return 0
	}
	id := binary.LittleEndian.Uint64(rec)
	if id >= uint64(len(r.out.Events)) || r.out.Events[id].Kind != codegen.EvExit {
		return 0
	}
	off := r.out.Events[id].Offsets[0]
	if off+8 > len(rec) {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(rec[off:]))
}

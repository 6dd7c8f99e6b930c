package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"gtrace/codegen"
	"gtrace/output"
	"gtrace/probe"
)

// bpftrace's errors for a script of which the mode runs no probe.
var (
	errTestOnly = errors.New("No probes attached; use --test to run test probes.")
	errNoProbes = errors.New("Attachment failed for all probes.")
)

// nothingRuns returns bpftrace's error for a script whose probes the mode
// does not run: test probes run only in test mode, bench probes only in
// bench mode, and these modes attach no other probe.
func nothingRuns(out *codegen.Output, opts *Options) error {
	var tests, benches bool
	for _, p := range out.Progs {
		switch k := p.Prog.Probe.Kind; {
		case k == probe.Begin || k == probe.End,
			k == probe.Test && opts.Test,
			k == probe.Bench && opts.Bench,
			k != probe.Test && k != probe.Bench && !opts.Test && !opts.Bench:
			return nil
		case k == probe.Test:
			tests = true
		case k == probe.Bench:
			benches = true
		}
	}
	switch {
	case tests:
		return errTestOnly
	case benches:
		return errBenchOnly
	case opts.Test || opts.Bench:
		return errNoProbes
	}
	return nil
}

// tests runs the script in test mode, as bpftrace's --mode test: BEGIN,
// then each test probe once in the script's order, then END. A test
// passes when it returns 0, reports no error and exits with no other
// code; what a passing test prints is dropped. Nothing is attached,
// and maps are not printed at exit. A failed test fails the run.
func (r *run) tests() (int, error) {
	if err := r.runSpecial(probe.Begin); err != nil {
		return 1, err
	}
	if err := r.drain(); err != nil {
		return 1, err
	}
	tests, names := r.probesOf(probe.Test)
	code := 0
	var passed []bool
	for i, p := range tests {
		ok, took, out, err := r.runTest(p)
		if err != nil {
			return 1, err
		}
		passed = append(passed, ok)
		if !ok {
			code = 1
		}
		if err := r.opts.Printer.TestResult(names, i, took, passed, out); err != nil {
			return 1, err
		}
	}
	r.exit = false
	if err := r.runSpecial(probe.End); err != nil {
		return 1, err
	}
	if err := r.drain(); err != nil {
		return 1, err
	}
	return code, r.flush()
}

// runTest runs one test and reports whether it passed, its run time and
// what it printed, in text, whatever the output format, as bpftrace
// captures it.
func (r *run) runTest(p *codegen.Program) (bool, time.Duration, string, error) {
	printer, stderr := r.opts.Printer, r.opts.Stderr
	defer func() { r.opts.Printer, r.opts.Stderr = printer, stderr }()
	var captured bytes.Buffer
	r.opts.Printer, r.opts.Stderr = output.NewText(&captured, &captured), &captured
	r.exit, r.exitCode = false, 0

	ret, took, err := r.progs[p.Name].Benchmark(benchData, 1, nil)
	if err != nil {
		return false, 0, "", fmt.Errorf("run %s: %w", p.Prog.Probe.Name, err)
	}
	errs, err := r.handleCounting()
	if err != nil {
		return false, 0, "", err
	}
	return ret == 0 && r.exitCode == 0 && errs == 0, took, captured.String(), nil
}

// handleCounting handles every event in the ring buffer, those after an
// exit() too, and counts the errors among them: errorf() and failed
// asserts, failed helpers, and the program's runtime errors, such as a
// division by zero, which bpftrace counts as errors.
func (r *run) handleCounting() (int, error) {
	errs := 0
	var rec ringbuf.Record
	for r.rd.AvailableBytes() > 0 {
		r.rd.SetDeadline(time.Now())
		if err := r.rd.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return 0, fmt.Errorf("read events: %w", err)
		}
		if len(rec.RawSample) >= 8 {
			if id := binary.LittleEndian.Uint64(rec.RawSample); id < uint64(len(r.out.Events)) {
				switch r.out.Events[id].Kind {
				case codegen.EvErrorf, codegen.EvHelperError, codegen.EvWarning:
					errs++
				}
			}
		}
		if err := r.handle(rec.RawSample); err != nil {
			return 0, err
		}
	}
	return errs, nil
}

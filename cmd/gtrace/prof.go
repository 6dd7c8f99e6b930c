package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"gtrace/bpfprof"
	"gtrace/runtime"
)

const profUsage = `USAGE:
    gtrace prof [-d DURATION] [-f text|json] PROG_ID|NAME
    gtrace prof --dump PROG_ID

Profiles one running BPF program: its run count and the time of each run,
measured by fentry and fexit programs attached to it, with perf counters
(cycles, instructions, LLC misses where the CPU has a PMU), next to the
kernel's own run_cnt and run_time_ns for the same window. Where fentry is
not allowed on the program, only the kernel's figures are shown. Runs for
DURATION (-d, --duration), or until Ctrl-C.

--dump prints the program's translated instructions and its JITed code.
`

// prof runs `gtrace prof`.
func prof(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var duration time.Duration
	fs.DurationVar(&duration, "d", 0, "")
	fs.DurationVar(&duration, "duration", 0, "")
	format := fs.String("f", "text", "")
	dump := fs.Bool("dump", false, "")
	operands, err := parseMixed(fs, args)
	if err != nil || len(operands) != 1 || duration < 0 ||
		(*format != "text" && *format != "json") {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, profUsage)
			return 0
		}
		fmt.Fprintf(stderr, "ERROR: invalid arguments to prof\n\n%s", profUsage)
		return 1
	}
	if err := runtime.CheckAdmin("gtrace prof opens a BPF program by its id"); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	target, err := bpfprof.Find(operands[0])
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if *dump {
		if err := bpfprof.Dump(target.ID, stdout); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return 1
		}
		return 0
	}
	done := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() { <-sigs; close(done) }()
	report, err := bpfprof.Profile(bpfprof.Options{Program: target, Duration: duration, Done: done, Errs: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if *format == "json" {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"gtrace/bench"
)

const benchUsage = `USAGE:
    gtrace bench overhead [-n RUNS] [--events N] [--scripts LIST] [--tracer T]... [--kprobes]
                          [--cpu CPU] [-f text|json] [--svg FILE]
    gtrace bench attach [-n RUNS] [--tracer T]... [--kprobes | --uprobes] [-f text|json]
    gtrace bench idle [-n RUNS] [-d SECONDS] [--tracer T]... [-f text|json]
    gtrace bench bigmap [-n RUNS] [--keys N] [--tracer T]... [-f text|json]

overhead runs the 18 scripts of Benchmark 1 of "DTrace vs bpftrace" on
dd if=/dev/zero of=/dev/null bs=1 count=N, pinned to one CPU, under every
tracer and under the floor (hand-written BPF programs doing the same
work), interleaved, and reports the best of RUNS runs per point: the
extra wall time per event, and the programs' own run time per event.
On a kernel without kprobes the scripts trace the read system call's
tracepoints; --kprobes traces vfs_read as written.

attach times compile and load, attach, and detach of N probes: 1, 10
and 100 syscall tracepoints and all of tracepoint:syscalls:*, or with
--kprobes 1, 10 and 100 kernel functions and all of kprobe:vfs_*, or
with --uprobes 1, 10 and all of the C library's str* functions. Detach
is SIGINT to exit: what a user waits for after Ctrl-C.

idle counts, for each tracer counting every system call by command for
SECONDS, its own system calls as it traced them, and its threads'
context switches per second: what a tracer costs when it has no work.

bigmap fills @[nsecs] = count() with N keys (300000 by default), one
per read of dd bs=1, then times each tracer's exit after SIGINT and
reads its peak RSS: what Ctrl-C costs when a map is big.

A tracer T is NAME=COMMAND, in which {} stands for the script's path
("bpftrace=/usr/bin/bpftrace {}"), or a program to run on the script.
The default is this gtrace, and bpftrace when it is in PATH.
`

// benchCmd runs `gtrace bench`.
func benchCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "overhead" && args[0] != "attach" && args[0] != "idle" && args[0] != "bigmap") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(stdout, benchUsage)
			return 0
		}
		fmt.Fprintf(stderr, "ERROR: gtrace bench wants overhead, attach, idle or bigmap\n\n%s", benchUsage)
		return 1
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runs := fs.Int("n", 5, "")
	events := fs.Int("events", 200000, "")
	keys := fs.Int("keys", 300000, "")
	scripts := fs.String("scripts", "", "")
	kprobes := fs.Bool("kprobes", false, "")
	uprobes := fs.Bool("uprobes", false, "")
	cpu := fs.Int("cpu", 0, "")
	seconds := fs.Float64("d", 5, "")
	format := fs.String("f", "text", "")
	svg := fs.String("svg", "", "")
	var tracers []string
	fs.Func("tracer", "", func(s string) error { tracers = append(tracers, s); return nil })
	err := fs.Parse(args[1:])
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, benchUsage)
		return 0
	}
	if err == nil && (fs.NArg() > 0 || *runs < 1 || *events < 1 || *keys < 1 || (*format != "text" && *format != "json") || (*kprobes && *uprobes) || *seconds <= 0) {
		err = fmt.Errorf("invalid arguments")
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: gtrace bench %s: %v\n\n%s", args[0], err, benchUsage)
		return 1
	}
	if err := benchRun(args[0], benchOptions{runs: *runs, events: *events, keys: *keys, scripts: *scripts, kprobes: *kprobes,
		uprobes: *uprobes, cpu: *cpu, idle: time.Duration(*seconds * float64(time.Second)), json: *format == "json", svg: *svg, tracers: tracers}, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

type benchOptions struct {
	runs, events, keys, cpu int
	idle                    time.Duration
	scripts, svg            string
	kprobes, uprobes        bool
	json                    bool
	tracers                 []string
}

func benchRun(what string, o benchOptions, stdout, stderr io.Writer) error {
	commands, err := benchTracers(o.tracers)
	if err != nil {
		return err
	}
	scripts, err := bench.ParseScripts(o.scripts)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("gtrace bench needs root, to load BPF programs and read their statistics")
	}
	if what == "idle" {
		res, err := bench.Idle(&bench.IdleConfig{Tracers: commands, Runs: o.runs, Duration: o.idle, Log: stderr})
		if err != nil {
			return err
		}
		if o.json {
			return bench.WriteJSON(stdout, res)
		}
		return bench.WriteIdleTable(stdout, res)
	}
	if what == "bigmap" {
		res, err := bench.BigMap(&bench.BigMapConfig{Tracers: commands, Runs: o.runs, Keys: o.keys, Log: stderr})
		if err != nil {
			return err
		}
		if o.json {
			return bench.WriteJSON(stdout, res)
		}
		return bench.WriteBigMapTable(stdout, res)
	}
	if what == "attach" {
		res, err := bench.Attach(&bench.AttachConfig{Tracers: commands, Runs: o.runs, Kprobes: o.kprobes,
			Uprobes: o.uprobes, Log: stderr})
		if err != nil {
			return err
		}
		if o.json {
			return bench.WriteJSON(stdout, res)
		}
		return bench.WriteAttachTable(stdout, res)
	}
	res, err := bench.Overhead(&bench.OverheadConfig{Tracers: commands, Scripts: scripts, Events: o.events,
		Runs: o.runs, Kprobes: o.kprobes, CPU: o.cpu, Log: stderr})
	if err != nil {
		return err
	}
	if o.svg != "" {
		f, err := os.Create(o.svg)
		if err != nil {
			return err
		}
		err = bench.WriteOverheadSVG(f, res)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", o.svg, err)
		}
	}
	if o.json {
		return bench.WriteJSON(stdout, res)
	}
	return bench.WriteOverheadTable(stdout, res)
}

// benchTracers parses the --tracer flags; none means this gtrace, and
// bpftrace if it is in PATH.
func benchTracers(flags []string) ([]bench.Command, error) {
	if len(flags) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find this gtrace: %w", err)
		}
		flags = []string{"gtrace=" + self + " {}"}
		if _, err := exec.LookPath("bpftrace"); err == nil {
			flags = append(flags, "bpftrace")
		}
	}
	var out []bench.Command
	for _, f := range flags {
		c, err := bench.ParseCommand(f)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if strings.EqualFold(o.Name, c.Name) {
				return nil, fmt.Errorf("two tracers named %s", c.Name)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

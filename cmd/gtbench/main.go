// Command gtbench measures gtrace and bpftrace side by side, in one run,
// and prints a Markdown table of the figures with their ratios. It needs
// root. See docs/performance.md.
//
//	gtbench [flags] [figure...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"gtrace/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "gtbench: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	cfg := &bench.Config{Log: os.Stderr}
	gtrace := flag.String("gtrace", "./gtrace", "the gtrace binary to measure")
	bpftrace := flag.String("bpftrace", "bpftrace", "the bpftrace binary to compare it with")
	all := flag.Bool("all", false, "measure every figure, wildcard included")
	noFusion := flag.Bool("no-fusion", false, "run gtrace with --no-fusion: syscall tracepoints unfused")
	flag.IntVar(&cfg.Runs, "n", 5, "runs per timed figure and tracer; the best counts")
	flag.IntVar(&cfg.Rounds, "rounds", 5, "dd workloads per per-event figure; the least cost counts")
	flag.IntVar(&cfg.Events, "events", 20000, "size of the per-event workload: dd bs=1 count=EVENTS, within what a ring buffer holds")
	flag.StringVar(&cfg.LibbpfTools, "libbpf-tools", "/usr/sbin", "the directory of libbpf-tools' biolatency and biosnoop, for the tools figure")
	flag.IntVar(&cfg.WildcardRuns, "wildcard-runs", 1, "runs of the wildcard figure, about a minute each with bpftrace")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: gtbench [flags] [figure...]\n\n"+
			"figures: %s\n(default: all but wildcard and tools; -all adds them)\n\nflags:\n",
			strings.Join(bench.FigureNames(), " "))
		flag.PrintDefaults()
	}
	flag.Parse()

	if os.Geteuid() != 0 {
		return fmt.Errorf("needs root, to load and inspect BPF programs")
	}
	if cfg.Runs < 1 || cfg.Rounds < 1 || cfg.Events < 1 || cfg.WildcardRuns < 1 {
		return fmt.Errorf("-n, -rounds, -events and -wildcard-runs must be positive")
	}
	var err error
	if cfg.Gtrace.Path, err = exec.LookPath(*gtrace); err != nil {
		return fmt.Errorf("gtrace binary: %w (build it: CGO_ENABLED=0 go build -o gtrace ./cmd/gtrace)", err)
	}
	if cfg.Bpftrace.Path, err = exec.LookPath(*bpftrace); err != nil {
		return fmt.Errorf("bpftrace binary: %w", err)
	}
	cfg.Gtrace.Name, cfg.Bpftrace.Name = "gtrace", "bpftrace"
	if *noFusion {
		cfg.Gtrace.Args = []string{"--no-fusion"}
	}

	cfg.Figures = flag.Args()
	if len(cfg.Figures) == 0 {
		for _, name := range bench.FigureNames() {
			if name != "wildcard" && name != "tools" || *all {
				cfg.Figures = append(cfg.Figures, name)
			}
		}
	}
	return bench.Run(cfg, os.Stdout)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gtrace/compiler"
	"gtrace/metrics"
	"gtrace/runtime"
	"gtrace/symbol"
)

const serveUsage = `USAGE:
    gtrace serve --metrics ADDR [--metrics-max-series N] [OPTIONS] FILENAME
    gtrace serve --metrics ADDR [--metrics-max-series N] [OPTIONS] -e 'program'

Runs the program as gtrace does, and while it traces answers
http://ADDR/metrics with its maps in the OpenMetrics text format (or
Prometheus' classic text format, if the scraper prefers it): count() as
a counter, sum() as a counter where it cannot decrease and a gauge
otherwise, min, max and avg as gauges, hist and lhist as histograms,
stats as a summary; the parts of a map's key become labels. gtrace's own
costs come too: events lost, updates refused by full maps and, with
--stats, each probe's runs and run time.

OPTIONS:
    --metrics ADDR  the address to listen on, HOST:PORT: an IP address
                    ([IPv6]:PORT), a host name, or :PORT for every
                    address; port 0 picks a free port (gtrace prints the
                    address it took)
    --metrics-max-series N
                    expose at most N keys of each map (default 10000): the
                    rest are counted by gtrace_self_map_series_dropped
    and every option of gtrace (gtrace -h) but -l, --mode, --dry-run and
    --emit-elf.
`

// serveCmd runs `gtrace serve`.
func serveCmd(args []string, stdout, stderr io.Writer) int {
	addr, maxSeries, rest, err := parseServeArgs(args)
	if err == errHelp {
		fmt.Fprint(stdout, serveUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, serveUsage)
		return 1
	}
	opts, err := parseArgs(rest)
	if err == errHelp {
		fmt.Fprint(stdout, serveUsage)
		return 0
	}
	if err == nil && (opts.list || opts.mode != "" || opts.dryRun || opts.emitELF != "") {
		err = errors.New("serve runs a program until it ends: -l, --mode, --dry-run and --emit-elf do not apply")
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, serveUsage)
		return 1
	}
	// Listen first, so that a bad or busy address fails before any
	// probe is loaded.
	l, err := metrics.Listen(addr)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: --metrics: %v\n", err)
		return 1
	}
	defer l.Close() // if the server never starts; Shutdown closes it otherwise
	var srv *metrics.Server
	opts.serve = func(prog *compiler.Program, ropts *runtime.Options) error {
		exporter, err := metrics.NewExporter(prog, maxSeries, stderr)
		if err != nil {
			return err
		}
		srv = metrics.NewServer(exporter)
		go srv.Serve(l)
		ropts.Snapshots = func(read func() (*runtime.Snapshot, error)) {
			srv.SetReader(read)
			fmt.Fprintf(stderr, "Serving metrics at http://%s/metrics\n", l.Addr())
		}
		return nil
	}
	symbol.DebugDirs = opts.debugDirs
	err = trace(opts, stdout, stderr)
	if srv != nil {
		srv.Shutdown()
	}
	if err != nil {
		if ec, ok := err.(exitCode); ok {
			return int(ec)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// parseServeArgs takes serve's own flags out of args, up to a "--" that
// starts the program's options, and returns the rest for parseArgs.
func parseServeArgs(args []string) (addr string, maxSeries int, rest []string, err error) {
	maxSeries = metrics.DefaultMaxSeries
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if name != "--metrics" && name != "--metrics-max-series" {
			if a == "-h" || a == "--help" {
				return "", 0, nil, errHelp
			}
			rest = append(rest, a)
			if a == "--" {
				return addr, maxSeries, append(rest, args[i+1:]...), checkAddr(addr)
			}
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return "", 0, nil, fmt.Errorf("option %s needs a value", a)
			}
			i++
			value = args[i]
		}
		if name == "--metrics" {
			addr = value
			continue
		}
		if maxSeries, err = strconv.Atoi(value); err != nil || maxSeries < 1 {
			return "", 0, nil, fmt.Errorf("--metrics-max-series: %q is not a positive number", value)
		}
	}
	return addr, maxSeries, rest, checkAddr(addr)
}

// checkAddr checks that --metrics was given an address.
func checkAddr(addr string) error {
	if addr == "" {
		return errors.New("serve needs --metrics ADDR, the address to serve /metrics on")
	}
	return nil
}

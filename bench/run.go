package bench

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Config says what Run measures, and how often.
type Config struct {
	Gtrace, Bpftrace Tracer
	// Runs is how many times each timed figure is measured per tracer;
	// the best run counts.
	Runs int
	// Rounds is how many workloads each per-event figure runs; the least
	// cost counts.
	Rounds int
	// Events is the size of the per-event workload: dd bs=1 count=Events.
	Events int
	// WildcardRuns is Runs for the tracepoint:syscalls:* figure, which
	// takes about a minute per bpftrace run.
	WildcardRuns int
	// LibbpfTools is the directory of libbpf-tools' binaries, which the
	// tools figure measures gtrace's tools against.
	LibbpfTools string
	// Figures names the figures to measure, from FigureNames.
	Figures []string
	// Log receives progress, one line per measurement.
	Log io.Writer
}

// figure is one group of rows of the table.
type figure struct {
	name    string
	measure func(*Config) ([]Row, error)
}

var figures = []figure{
	{"startup", startup},
	{"hist", histOneLiner},
	{"attach", attachTime},
	{"compile", compileLong},
	{"events", perEvent},
	{"uprobe", uprobeWall},
	{"wildcard", wildcard},
	{"tools", blockToolsFigure},
}

// FigureNames lists the figures Run can measure, in table order.
func FigureNames() []string {
	var names []string
	for _, f := range figures {
		names = append(names, f.name)
	}
	return names
}

// Run measures the figures cfg names, both tracers side by side, and
// writes a header and a Markdown table of the results to w.
func Run(cfg *Config, w io.Writer) error {
	for _, name := range cfg.Figures {
		if !slices.Contains(FigureNames(), name) {
			return fmt.Errorf("unknown figure %q: want one of %s", name, strings.Join(FigureNames(), ", "))
		}
	}
	header, err := describe(cfg)
	if err != nil {
		return err
	}
	var rows []Row
	for _, f := range figures {
		if !slices.Contains(cfg.Figures, f.name) {
			continue
		}
		fmt.Fprintf(cfg.Log, "measuring %s...\n", f.name)
		r, err := f.measure(cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		rows = append(rows, r...)
	}
	fmt.Fprint(w, header)
	return WriteTable(w, rows)
}

// today is the day of a measurement, as the results print it.
func today() string { return time.Now().Format("2006-01-02") }

// kernelRelease is the running kernel's release, as uname -r prints it.
func kernelRelease() (string, error) {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return "", fmt.Errorf("uname: %w", err)
	}
	return unix.ByteSliceToString(uts.Release[:]), nil
}

// describe says what was measured, where and when.
func describe(cfg *Config) (string, error) {
	release, err := kernelRelease()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, Linux %s, %d CPUs; best of %d runs, least of %d rounds of dd bs=1 count=%d per event cost\n",
		today(), release, runtime.NumCPU(), cfg.Runs, cfg.Rounds, cfg.Events)
	for _, t := range cfg.tracers() {
		out, err := exec.Command(t.Path, "--version").Output()
		if err != nil {
			return "", fmt.Errorf("%s --version: %w", t.Path, err)
		}
		fmt.Fprintf(&b, "%s: %s\n", strings.Join(append([]string{t.Path}, t.Args...), " "), bytes.TrimSpace(out))
	}
	if slices.Contains(cfg.Figures, "tools") {
		out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "libbpf-tools").Output()
		if err != nil {
			out = []byte("version unknown: " + err.Error())
		}
		fmt.Fprintf(&b, "%s: libbpf-tools %s\n", cfg.LibbpfTools, out)
	}
	b.WriteString("\n")
	return b.String(), nil
}

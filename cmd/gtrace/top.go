package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"gtrace/bpfstat"
	"gtrace/runtime"
)

const topUsage = `USAGE:
    gtrace top [--once] [-f text|json] [--sort cpu|runs|avg|id|name] [--interval DURATION] [FILTER]

Lists every BPF program on the machine with what it costs: run count,
runs per second, average run time and CPU share, what it is attached to
and which processes hold it. FILTER keeps programs whose name, type,
attach point or owner contains it. Refreshes every interval until q or
Ctrl-C; --once prints one sample.
`

// top runs `gtrace top`.
func top(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	once := fs.Bool("once", false, "")
	format := fs.String("f", "text", "")
	sortBy := fs.String("sort", "cpu", "")
	interval := fs.Duration("interval", time.Second, "")
	operands, err := parseMixed(fs, args)
	if err != nil || len(operands) > 1 || *interval <= 0 ||
		(*format != "text" && *format != "json") {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, topUsage)
			return 0
		}
		fmt.Fprintf(stderr, "ERROR: invalid arguments to top\n\n%s", topUsage)
		return 1
	}
	if err := runtime.CheckAdmin("gtrace top lists every BPF program of the machine"); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	done := make(chan struct{})
	var stop sync.Once
	quit := func() { stop.Do(func() { close(done) }) }
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() { <-sigs; quit() }()
	if !*once {
		// On a terminal, q quits at once, as in top.
		if restore, ok := keysRaw(os.Stdin); ok {
			defer restore()
			go func() {
				b := make([]byte, 1)
				for {
					if n, err := os.Stdin.Read(b); err != nil || n == 1 && b[0] == 'q' {
						quit()
						return
					}
				}
			}()
		}
	}
	filter := ""
	if len(operands) == 1 {
		filter = operands[0]
	}
	err = bpfstat.Top(bpfstat.TopOptions{Interval: *interval, Once: *once, JSON: *format == "json",
		Sort: *sortBy, Filter: filter, Out: stdout, Errs: stderr, Done: done})
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// keysRaw makes the terminal on f deliver keys one at a time, unechoed,
// and returns how to restore it; ok is false when f is not a terminal.
func keysRaw(f *os.File) (restore func(), ok bool) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, false
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, false
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, true
}

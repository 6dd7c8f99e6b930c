package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gtrace/calltrace"
	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/flow"
	"gtrace/runtime"
	"gtrace/sema"
)

var flowUsage = `USAGE:
    gtrace flow (-c CMD | -p PID) [--syscall NAME[,NAME]] [--graph] [-o FILE] [FUNC_GLOB...]
    gtrace flow --from FILE [--graph]
    gtrace flow --serve ADDR FILE

Follows the system calls of a process through the kernel, as DTrace's
flowindent does: a line for the entry (->) and the return (<-) of every
kernel function matching FUNC_GLOB called inside them, indented by depth,
with the time each call took; the system call itself is the outermost
(=> and <=). Several globs may be given, as arguments or separated by
commas. Without any, the functions of the file system, page cache,
readahead and block device paths a read or write goes through:
    ` + strings.Join(flow.DefaultFuncs, ",") + `

OPTIONS:
    -c, --cmd CMD     run CMD and follow it, until it exits
    -p, --pid PID     follow process PID, until it exits or Ctrl-C
    --syscall NAME    follow only these system calls (default: all)
    --graph           print, at the end, the calls merged into a call graph
                      (uftrace's graph: total time and count per call path)
                      instead of a line per call
    -o, --output FILE also write the calls to FILE in the Chrome Trace
                      Event format (Perfetto, chrome://tracing)
    --from FILE       trace nothing: print the calls saved in FILE by -o
    --serve ADDR      trace nothing: serve the calls saved in FILE by -o as
                      a web page at ADDR (HOST:PORT) until Ctrl-C
`

// stringList is a flag that may be given several times, each with a
// comma-separated list.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// flowOptions are the parsed command line of gtrace flow.
type flowOptions struct {
	command, outFile string
	// from is the file of a saved flow to print, instead of tracing;
	// serve, the address to serve it at as a web page.
	from, serve     string
	pid             int
	syscalls, funcs []string
	graph           bool
}

// parseFlow parses the arguments of gtrace flow.
func parseFlow(args []string) (*flowOptions, error) {
	fs := flag.NewFlagSet("flow", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o flowOptions
	var pid string
	var syscalls stringList
	for _, name := range []string{"c", "cmd"} {
		fs.StringVar(&o.command, name, "", "")
	}
	for _, name := range []string{"p", "pid"} {
		fs.StringVar(&pid, name, "", "")
	}
	for _, name := range []string{"o", "output"} {
		fs.StringVar(&o.outFile, name, "", "")
	}
	fs.StringVar(&o.from, "from", "", "")
	fs.StringVar(&o.serve, "serve", "", "")
	fs.Var(&syscalls, "syscall", "")
	fs.BoolVar(&o.graph, "graph", false, "")
	operands, err := parseMixed(fs, args)
	if err != nil {
		return nil, err
	}
	if o.serve != "" {
		// The operand is the saved flow, not a glob.
		alone := o.command == "" && pid == "" && o.outFile == "" && o.from == "" && len(syscalls) == 0 && !o.graph
		if len(operands) != 1 || !alone {
			return nil, errors.New("--serve serves a saved flow: gtrace flow --serve ADDR FILE")
		}
		o.from = operands[0]
		return &o, nil
	}
	o.syscalls = syscalls
	if o.funcs, err = flow.Globs(operands); err != nil {
		return nil, err
	}
	if pid != "" {
		if o.pid, err = parsePid(pid); err != nil {
			return nil, err
		}
	}
	switch {
	case o.from != "" && (o.command != "" || o.pid != 0 || o.outFile != "" || len(syscalls) > 0 || len(operands) > 0):
		return nil, errors.New("--from prints a saved flow: it takes only --graph")
	case o.from != "":
	case o.command != "" && o.pid != 0:
		return nil, errors.New("-c and -p can not both be given")
	case strings.TrimSpace(o.command) == "" && o.pid == 0:
		return nil, errors.New("a process to follow is needed: -c CMD or -p PID")
	}
	return &o, nil
}

// flowCmd runs `gtrace flow`.
func flowCmd(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlow(args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, flowUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, flowUsage)
		return 1
	}
	if o.serve != "" {
		return serveRecording(o.serve, o.from, stdout, stderr)
	}
	run := runFlow
	if o.from != "" {
		run = printSavedFlow
	}
	if err := run(o, stdout, stderr); err != nil {
		if ec, ok := err.(exitCode); ok {
			return int(ec)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// runFlow records the flow o asks for and prints it.
func runFlow(o *flowOptions, stdout, stderr io.Writer) error {
	start := time.Now()
	if err := runtime.CheckPrivileges(); err != nil {
		return err
	}
	if o.pid != 0 {
		if err := checkPid(o.pid); err != nil {
			return err
		}
	}
	probes, err := flow.ChooseProbes()
	if err != nil {
		return err
	}
	src, err := flow.Script(flow.Options{Syscalls: o.syscalls, Funcs: o.funcs, Pid: o.pid, Probes: probes})
	if err != nil {
		return err
	}
	// The script's config block is the flow's own: no BPFTRACE_*
	// variable changes it.
	noEnv := func(string) (string, bool) { return "", false }
	copts := &compiler.Options{
		Name:    "flow",
		Check:   sema.Options{Env: noEnv, Pid: o.pid},
		Codegen: codegen.Options{Pid: uint32(o.pid)},
	}
	var child *runtime.Child
	if o.command != "" {
		if child, err = runtime.StartChild(o.command); err != nil {
			return err
		}
		defer child.Kill()
		copts.Codegen.Cpid = uint32(child.Pid)
	}
	prog, err := compiler.Compile([]byte(src), copts)
	if err != nil {
		return rendered(stderr, err)
	}
	if prog.Warnings != nil {
		prog.Warnings.Render(stderr)
	}
	// The file is made before tracing, so that a path that can not be
	// written fails first.
	var outFile *os.File
	if o.outFile != "" {
		if outFile, err = os.Create(o.outFile); err != nil {
			return err
		}
		defer outFile.Close()
	}
	bw, flushIdle, flush := bufferedOutput(stdout, "")
	defer flush()
	var lines io.Writer = bw
	if o.graph {
		lines = nil
	}
	rec := flow.NewRecorder(lines, stderr)
	rec.Forget = !o.graph && outFile == nil
	ropts := &runtime.Options{
		Printer:       attachedTimer{rec, stderr, start, probes},
		Stderr:        stderr,
		MissingProbes: prog.Info.Config.MissingProbes,
		Flush:         flushIdle,
		// Ctrl-C on -p ends the recording, not the calls it has yet
		// to read.
		KeepQueued: true,
	}
	if child != nil {
		ropts.Attached = child.Release
		ropts.Wait = child.Wait
		ropts.Cpid = child.Pid
	} else {
		ropts.Wait = func() { runtime.WaitPid(o.pid) }
		ropts.Pid = o.pid
	}
	code, err := runtime.Run(prog.Output, ropts)
	if err != nil {
		return rendered(stderr, prog.Locate(err))
	}
	if o.graph {
		if err := calltrace.WriteGraph(bw, rec.Recording().Graph()); err != nil {
			return err
		}
	}
	if outFile != nil {
		if err := rec.Recording().WriteChrome(outFile); err != nil {
			return fmt.Errorf("write %s: %w", o.outFile, err)
		}
		if err := outFile.Close(); err != nil {
			return err
		}
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}

// attachedTimer says, once the probes are attached, how many and how
// long it took from the start.
type attachedTimer struct {
	*flow.Recorder
	stderr io.Writer
	start  time.Time
	probes flow.Probes
}

func (a attachedTimer) AttachedProbes(n uint64) error {
	_, err := fmt.Fprintf(a.stderr, "Attached %d probes (%s) in %.2fs\n", n, a.probes, time.Since(a.start).Seconds())
	return err
}

// printSavedFlow prints the flow saved in o.from, as lines or as a graph.
func printSavedFlow(o *flowOptions, stdout, _ io.Writer) error {
	f, err := os.Open(o.from)
	if err != nil {
		return err
	}
	defer f.Close()
	rec, err := calltrace.ReadChrome(f)
	if err != nil {
		return fmt.Errorf("%s: %w", o.from, err)
	}
	if rec.Command != "flow" {
		return fmt.Errorf("%s: a recording of gtrace %s, not of gtrace flow", o.from, rec.Command)
	}
	if o.graph {
		return calltrace.WriteGraph(stdout, rec.Graph())
	}
	return flow.WriteFlow(stdout, rec)
}

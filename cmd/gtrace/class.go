package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gtrace/class"
	"gtrace/compiler"
	"gtrace/kernel"
	"gtrace/output"
	"gtrace/runtime"
)

const classUsage = `USAGE:
    gtrace class STRUCT [OPTIONS]
    gtrace class STRUCT --list
    gtrace class --serve ADDR FILE

Traces every kernel function that takes a pointer to struct STRUCT (or to
a struct that begins with one) in one of its first five parameters, and
follows each object by its address from its first sighting to the end of
its life. At the end it prints, per object life, the functions it passed
through, nested as they were called, with their durations and the
object's fields.

OPTIONS:
    --list               list the functions and the argument that is the object
    --fields LIST        fields to record at each call, comma separated
                         (bio: bi_iter.bi_sector,bi_iter.bi_size,bi_opf)
    --filter EXPR        start a life only where EXPR holds, such as
                         'bi_iter.bi_size > 4096'; members are the object's
    -p, --pid PID        start lives only in process PID
    --comm NAME          start lives only in threads named NAME
    --cpu N              start lives only on CPU N
    --funcs GLOBS        trace only the functions matching these patterns,
                         comma separated ('bio_*,submit_bio*')
    --start FUNCS        functions whose entry begins a new life
    --end FUNCS          functions whose return ends a life
    --fentry             attach fentry/fexit even where kprobe.multi exists
    -o FILE              write the recording in the Chrome Trace Event
                         format (Perfetto, speedscope, chrome://tracing)
    -c CMD               run CMD, trace until it exits
    -d, --duration SECS  trace for SECS seconds (or a Go duration: 500ms)
    -v                   say how the functions were attached, and how long
                         it took
    --serve ADDR         trace nothing: serve FILE, saved by -o, as a web
                         page at ADDR (HOST:PORT) until Ctrl-C

Later calls of a live object are recorded whatever thread or CPU they run
on; the filters only decide where a life may start.
`

// classOptions are gtrace class's command line.
type classOptions struct {
	structName                    string
	list, fentry, verbose         bool
	fields, filter, comm, outFile string
	funcs, start, end             string
	// serve is the address to serve the recording in file at.
	serve, file string
	pid, cpu    int
	command     string
	duration    time.Duration
}

// classCmd runs `gtrace class ...`.
func classCmd(args []string, stdout, stderr io.Writer) int {
	o, err := parseClassArgs(args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, classUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, classUsage)
		return 1
	}
	if o.serve != "" {
		return serveRecording(o.serve, o.file, stdout, stderr)
	}
	if err := classTrace(o, stdout, stderr); err != nil {
		if ec, ok := err.(exitCode); ok {
			return int(ec)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

func parseClassArgs(args []string) (*classOptions, error) {
	o := &classOptions{cpu: -1}
	fs := flag.NewFlagSet("class", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.list, "list", false, "")
	fs.BoolVar(&o.fentry, "fentry", false, "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.StringVar(&o.fields, "fields", "", "")
	fs.StringVar(&o.filter, "filter", "", "")
	fs.StringVar(&o.comm, "comm", "", "")
	fs.StringVar(&o.outFile, "o", "", "")
	fs.StringVar(&o.funcs, "funcs", "", "")
	fs.StringVar(&o.start, "start", "", "")
	fs.StringVar(&o.end, "end", "", "")
	fs.StringVar(&o.command, "c", "", "")
	fs.StringVar(&o.serve, "serve", "", "")
	fs.IntVar(&o.pid, "p", 0, "")
	fs.IntVar(&o.pid, "pid", 0, "")
	fs.IntVar(&o.cpu, "cpu", -1, "")
	duration := func(s string) error {
		d, err := parseSeconds(s)
		o.duration = d
		return err
	}
	fs.Func("d", "", duration)
	fs.Func("duration", "", duration)
	operands, err := parseMixed(fs, args)
	if err != nil {
		return nil, err
	}
	if o.serve != "" {
		// The operand is a saved recording, not a struct.
		if len(operands) != 1 || fs.NFlag() != 1 {
			return nil, errors.New("--serve serves a saved recording: gtrace class --serve ADDR FILE")
		}
		o.file = operands[0]
		return o, nil
	}
	if len(operands) != 1 {
		return nil, errors.New("gtrace class takes one struct's name")
	}
	o.structName = strings.TrimPrefix(strings.TrimSpace(operands[0]), "struct ")
	if o.pid < 0 || o.cpu < -1 {
		return nil, errors.New("--pid and --cpu take a number from 0")
	}
	return o, nil
}

// parseSeconds reads a number of seconds, or a Go duration.
func parseSeconds(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: seconds, or a duration such as 500ms", s)
	}
	return d, nil
}

// splitList splits a comma separated list, nil for "".
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func classTrace(o *classOptions, stdout, stderr io.Writer) error {
	funcs, err := class.Find(o.structName, splitList(o.funcs))
	if err != nil {
		return err
	}
	if len(funcs) == 0 {
		return fmt.Errorf("no traceable function takes a struct %s pointer in its first %d parameters", o.structName, class.MaxArg)
	}
	if o.list {
		_, err := io.WriteString(stdout, class.FormatList(funcs, o.structName))
		return err
	}
	if err := runtime.CheckPrivileges(); err != nil {
		return err
	}
	plan, err := classPlan(o, funcs, stderr)
	if err != nil {
		return rendered(stderr, err) // --fields and --filter point into their text
	}
	if len(plan.Funcs) == 0 {
		return fmt.Errorf("none of the %d functions that take a struct %s can be traced by fentry (module functions, structs passed by value)", len(funcs), o.structName)
	}
	var child *runtime.Child
	if o.command != "" {
		if child, err = runtime.StartChild(o.command); err != nil {
			return err
		}
		defer child.Kill()
	}
	prog, script, err := class.Compile(plan, compiler.Options{})
	if err != nil {
		return rendered(stderr, err)
	}
	if prog.Warnings != nil && o.verbose {
		prog.Warnings.Render(stderr)
	}
	// Create the file before tracing, so that a bad path is said at once.
	var out *os.File
	if o.outFile != "" {
		if out, err = os.Create(o.outFile); err != nil {
			return err
		}
		defer out.Close()
	}
	rec := class.NewRecorder(output.NewText(stdout, stderr))
	attached := func() {
		fmt.Fprintf(stderr, "Tracing struct %s in %d functions... Hit Ctrl-C to end.\n", plan.Struct, len(plan.Funcs))
	}
	ropts := &runtime.Options{Printer: rec, Stderr: stderr, MissingProbes: "warn", Quiet: true, Attached: attached,
		KeepQueued: true} // Ctrl-C ends a recording, not the calls it has yet to read
	if o.verbose {
		mechanism := "fentry/fexit"
		if plan.Multi {
			mechanism = "kprobe.multi"
		}
		ropts.Timed = func(t runtime.Timings) {
			fmt.Fprintf(stderr, "Attached %d functions with %s: %d links; load %v, attach %v\n", len(plan.Funcs), mechanism,
				t.Links, t.Load.Round(time.Millisecond), t.Attach.Round(time.Millisecond))
		}
	}
	// A kprobe that fires while another BPF program runs on its CPU,
	// as in the interrupt that completes an I/O, is skipped: the
	// recording lacks that call, and says so.
	ropts.Missed = func(n uint64) {
		if n > 0 {
			fmt.Fprintf(stderr, "WARNING: the kernel skipped %d calls of the traced functions (a probe that fires while another BPF program runs on its CPU does not run); lives may lack them\n", n)
		}
	}
	if child != nil {
		ropts.Attached = func() { attached(); child.Release() }
		ropts.Wait = child.Wait
		ropts.Cpid = child.Pid
	}
	code, err := runtime.Run(prog.Output, ropts)
	if err != nil {
		return rendered(stderr, script.Locate(prog.Locate(err)))
	}
	recording := rec.Recording(plan.Struct, plan.Fields)
	if out != nil {
		if err := recording.WriteChrome(out); err != nil {
			return fmt.Errorf("write %s: %w", o.outFile, err)
		}
		if err := out.Close(); err != nil {
			return fmt.Errorf("write %s: %w", o.outFile, err)
		}
		fmt.Fprintf(stderr, "Wrote %d lives of struct %s to %s\n", len(recording.Tracks), plan.Struct, o.outFile)
	} else if err := recording.WriteText(stdout); err != nil {
		return err
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}

// classPlan turns the options into what to trace.
func classPlan(o *classOptions, funcs []class.Func, stderr io.Writer) (*class.Plan, error) {
	defaults := class.DefaultsFor(o.structName)
	p := &class.Plan{Struct: o.structName, Funcs: funcs, Fields: defaults.Fields,
		Pid: o.pid, Comm: o.comm, CPU: o.cpu, Duration: o.duration,
		Start: defaults.Start, End: defaults.End,
		Multi: !o.fentry && kernel.HasKprobeMulti()}
	if o.start != "" {
		p.Start = splitList(o.start)
	}
	if o.end != "" {
		p.End = splitList(o.end)
	}
	p.Start, p.End = class.Present(p.Start, funcs), class.Present(p.End, funcs)
	if o.fields != "" {
		fields, err := class.ParseFields(o.fields)
		if err != nil {
			return nil, err
		}
		p.Fields = fields
	}
	if o.filter != "" {
		members, err := class.Members(o.structName)
		if err != nil {
			return nil, err
		}
		if p.Filter, err = class.ParseFilter(o.filter, members); err != nil {
			return nil, err
		}
	}
	if !p.Multi {
		// A trampoline binds to one function at load, and a function it
		// cannot bind to would fail the whole load.
		var bind []class.Func
		for _, f := range funcs {
			if f.Fentry && !strings.Contains(f.Name, ":") {
				bind = append(bind, f)
			}
		}
		if o.verbose && len(bind) < len(funcs) {
			fmt.Fprintf(stderr, "fentry/fexit: %d of the %d functions are module functions or pass a struct by value, and are left out\n", len(funcs)-len(bind), len(funcs))
		}
		p.Funcs = bind
	}
	return p, nil
}

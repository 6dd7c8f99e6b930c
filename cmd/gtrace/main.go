// Command gtrace runs bpftrace programs, compiled in-process to BPF.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/kernel"
	"gtrace/output"
	"gtrace/probe"
	"gtrace/runtime"
	"gtrace/sema"
	"gtrace/symbol"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `USAGE:
    gtrace [options] FILENAME [ARGS...]
    gtrace [options] -e 'program' [ARGS...]
    gtrace [options] -e 'program' [ARGS...] -- [ARGS...] [--NAME[=VALUE]...]
    gtrace -l [SEARCH]
    gtrace top [--once] [-f json] [--sort KEY] [--interval DURATION] [FILTER]
    gtrace prof [-d DURATION] [-f json] PROG_ID|NAME
    gtrace prof --dump PROG_ID
    gtrace bench overhead|attach [options]   (gtrace bench -h)
    gtrace tools [NAME [FLAGS] [INTERVAL [COUNT]]]  (gtrace tools -h)
    gtrace flow (-c CMD | -p PID) [--syscall NAME] [--graph] [FUNC_GLOB...]
    gtrace view --serve ADDR FILE   (a recording of class or flow, as a web page)
    gtrace serve --metrics ADDR [options] FILENAME  (gtrace serve -h)
    gtrace class STRUCT [--list] [OPTIONS]   (gtrace class -h)

OPTIONS:
    -e PROGRAM     the program to run
    -l, --list [SEARCH|FILENAME]
                   list probes matching SEARCH, or the probes of the program
                   (-e or FILENAME); with -p, the process's uprobes and USDT too
    -lv [SEARCH]   list probes with their arguments, types with their fields
    -c, --cmd CMD  run CMD, set cpid, and exit when it exits
    -p, --pid PID  trace only process PID; exit when it exits
    --cgroup PATH  trace only the tasks in the cgroup v2 PATH and below it:
                   a directory, or a path from the hierarchy's root as
                   /proc/PID/cgroup shows it; sets $container_pid
    --pod UID      trace only the containers of the Kubernetes pod UID, found
                   as the kubelet lays out its cgroup; sets $container_pid
    --container ID with --pod, only its container whose id starts with ID
    --pidns INODE  trace only the tasks in the PID namespace INODE (as in
                   /proc/PID/ns/pid's pid:[INODE]); sets $container_pid
    --dwarf-pid PID
                   add PID to the processes dw_ustack reads unwind tables of
    -I DIR         add DIR to the directories searched by #include
    --include FILE include FILE before the program
    --debuginfo DIR[:DIR]
                   search DIR for the debug files of stripped binaries
    -f FORMAT      output format: text (default), json, or folded: maps keyed
                   by a stack as folded stacks, "main;foo;bar 123" a line
                   (root first: the key's other parts as one frame, user
                   frames, "-", kernel frames); all else as text
    --flamegraph FILE
                   at exit, also draw the maps keyed by a stack as an
                   interactive flame graph: FILE.svg or FILE.html
    --pprof FILE   at exit, also write the maps keyed by a stack as a pprof
                   profile, for go tool pprof
    -o, --output FILE
                   write output to FILE
    -B MODE        output buffering: line, full or none
    -q, --quiet    leave out the "Attached N probes" line
    -v, --verbose  per-probe instruction and verifier counts
    -k, --warnings warn when a probe read fails or a map read finds no value
    -d, --debug STAGE
                   print debug output of STAGE: ast (the program after parsing,
                   to stderr), codegen (the BPF instructions) or all; several
                   stages may be given, comma separated or in several -d
    --dry-run      compile and load through the verifier, but do not attach
    --emit-elf FILE
                   (dry run) write the programs and maps as a BPF object file
                   to FILE, for libbpf (bpftool prog loadall)
    --probe-filter REGEX
                   run only the probes whose name matches REGEX (and BEGIN, END)
    --unsafe       allow unsafe functions (system, signal)
    --usdt-file-activation
                   activate USDT semaphores by file (what gtrace always does)
    --no-feature FEATURE[,FEATURE]
                   do not use kprobe_multi or uprobe_multi (kprobe_session: unused)
    --no-warnings  disable all warning messages
    --no-fusion    run each syscall tracepoint as itself, not fused into the
                   raw_syscalls dispatchers (for comparing the two)
    --stats        print what each probe cost at exit: runs, run time, lost events
    --mode bench, --bench
                   run the bench: probes, each many times over, and print their
                   mean time per run; attach nothing
    --mode test, --test
                   run the test: probes, each once, and report which passed;
                   attach nothing
    --info         print which kernel BPF features gtrace can use
    -h, --help     show this help
    -V, --version  print the bpftrace version gtrace follows, and its own

ENVIRONMENT:
    BPFTRACE_<SETTING> sets a config setting, over the script's config block:
    BPFTRACE_MAX_STRLEN, BPFTRACE_MAX_MAP_KEYS, BPFTRACE_STACK_MODE, ...
`

func main() {
	if isKubectlPlugin() {
		os.Exit(kubectlCmd(os.Args[1:], os.Stdout, os.Stderr))
	}
	if name := linkedTool(); name != "" {
		os.Exit(runTool(name, os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed command line.
type options struct {
	program, filename string
	// source is the script of a tool, named filename.
	source         []byte
	params         []string
	named          []string // program options after --, without their dashes
	list           bool
	listVerbose    bool
	listPattern    string
	command        string
	pid            int
	dwarfPids      []int // --dwarf-pid: more processes dw_ustack unwinds
	format         string
	outFile        string
	quiet, verbose bool
	debug          debugStages
	dryRun, unsafe bool
	noFusion       bool
	stats          bool
	includeDirs    []string
	includes       []string
	// warnings (-k) reports failed helper calls at run time.
	warnings bool
	// buffering (-B) is "line", "full" or "none"; "" for the default.
	buffering   string
	probeFilter *regexp.Regexp
	emitELF     string
	noFeature   map[string]bool
	mode        string // --mode: "bench", "test" or ""
	// flameGraph and pprofFile are the files of the stack outputs.
	flameGraph, pprofFile string
	noWarnings            bool
	debugDirs             []string
	container             containerFlags
	// serve, set by gtrace serve, prepares the run of the compiled
	// program to expose its maps.
	serve func(prog *compiler.Program, ropts *runtime.Options) error
}

// subcommands are gtrace's modes other than running a script, by the
// first argument that names them.
var subcommands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"top":   top,
	"prof":  prof,
	"tools": toolsCmd,
	"bench": benchCmd,
	"view":  viewCmd,
	"serve": serveCmd,
	"flow":  flowCmd,
	"class": classCmd,
	"agent": agentCmd,
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if sub := subcommands[args[0]]; sub != nil {
			return sub(args[1:], stdout, stderr)
		}
	}
	opts, err := parseArgs(args)
	if err == errHelp {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err == errVersion {
		fmt.Fprintf(stdout, "bpftrace %s (gtrace %s)\n", bpftraceVersion, version)
		return 0
	}
	if err == errInfo {
		return info(stdout, stderr)
	}
	var plain plainError
	if errors.As(err, &plain) {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, usage)
		return 1
	}
	symbol.DebugDirs = opts.debugDirs
	if opts.list {
		return list(opts, stdout, stderr)
	}
	if err := trace(opts, stdout, stderr); err != nil {
		if ec, ok := err.(exitCode); ok {
			return int(ec)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// bpftraceVersion is the bpftrace release whose language and command
// line gtrace follows.
const bpftraceVersion = "v0.26.1"

var (
	errHelp    = fmt.Errorf("help")
	errVersion = fmt.Errorf("version")
	errInfo    = fmt.Errorf("info")
)

// exitCode is returned by trace to exit with a code and no message.
type exitCode int

func (e exitCode) Error() string { return "exit " + strconv.Itoa(int(e)) }

// parseArgs parses bpftrace's command line, which mixes flags and
// positional parameters the way getopt does.
func parseArgs(args []string) (*options, error) {
	o := &options{format: "text"}
	haveProgram := false
	var listArgs []string
	args = splitArgs(args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s needs a value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch {
		case a == "-h" || a == "--help":
			return nil, errHelp
		case a == "--version" || a == "-V":
			return nil, errVersion
		case a == "--info":
			return nil, errInfo
		case a == "-e":
			o.program, err = value()
			haveProgram = true
		case a == "-l" || a == "--list":
			o.list = true
		case a == "-c" || a == "--cmd":
			if o.command, err = value(); err == nil && strings.TrimSpace(o.command) == "" {
				err = errors.New("USAGE: -c needs a command to run, got an empty one")
			}
		case a == "-I":
			var dir string
			dir, err = value()
			o.includeDirs = append(o.includeDirs, dir)
		case a == "--include":
			var file string
			file, err = value()
			o.includes = append(o.includes, file)
		case a == "-p" || a == "--pid":
			var s string
			if s, err = value(); err == nil {
				o.pid, err = parsePid(s)
			}
		case a == "--cgroup" || a == "--pod" || a == "--container" || a == "--pidns":
			var s string
			if s, err = value(); err == nil {
				err = o.container.set(a, s)
			}
		case a == "--dwarf-pid":
			var s string
			if s, err = value(); err == nil {
				var pid int
				pid, err = parsePid(s)
				o.dwarfPids = append(o.dwarfPids, pid)
			}
		case a == "-f":
			o.format, err = value()
			if err == nil && o.format != "text" && o.format != "json" && o.format != "folded" {
				err = plainError{fmt.Errorf("Invalid output format %q\nValid formats: 'text', 'json', 'folded'", o.format)}
			}
		case a == "--flamegraph":
			if o.flameGraph, err = value(); err == nil {
				err = flameGraphExt(o.flameGraph)
			}
		case a == "--pprof":
			o.pprofFile, err = value()
		case a == "-o" || a == "--output":
			o.outFile, err = value()
		case a == "-q" || a == "--quiet":
			o.quiet = true
		case a == "-v" || a == "--verbose":
			o.verbose = true
		case a == "-k" || a == "--warnings":
			switch {
			case o.warnings:
				err = plainError{errors.New("USAGE: -kk has been deprecated. Use a single -k for runtime warnings for errors in map lookups and probe reads.")}
			case o.noWarnings:
				err = plainError{errors.New("USAGE: -k, --warnings conflicts with --no-warnings")}
			}
			o.warnings = true
		case a == "-B":
			var s string
			if s, err = value(); err == nil {
				o.buffering, err = parseBuffering(s)
			}
		case a == "-b" || a == "--btf":
			// bpftrace keeps these for compatibility: BTF is always used.
		case a == "--usdt-file-activation":
			// What gtrace always does: the kernel raises a USDT
			// semaphore in every process that maps the file (with -p,
			// in that process).
		case a == "--emit-elf":
			o.emitELF, err = value()
		case a == "--probe-filter":
			var s string
			if s, err = value(); err == nil {
				o.probeFilter, err = parseProbeFilter(s)
			}
		case a == "--no-feature":
			var s string
			if s, err = value(); err == nil {
				if o.noFeature == nil {
					o.noFeature = map[string]bool{}
				}
				err = parseNoFeature(s, o.noFeature)
			}
		case a == "-d" || a == "--debug":
			var s string
			if s, err = value(); err == nil {
				err = o.debug.parse(s)
			}
		case a == "-dd":
			err = fmt.Errorf("USAGE: invalid option for -d: d (bpftrace 0.17's -dd, its most verbose debug output, is gone: -d takes a stage, one of %s)", validStages)
		case a == "--debuginfo" || strings.HasPrefix(a, "--debuginfo="):
			o.debugDirs, err = debugDirs(o.debugDirs, a, value)
		case a == "--dry-run":
			o.dryRun = true
		case a == "--unsafe":
			o.unsafe = true
		case a == "--no-fusion":
			o.noFusion = true
		case a == "--stats":
			o.stats = true
		case a == "--mode":
			var s string
			if s, err = value(); err == nil {
				err = o.setMode(s)
			}
		case strings.HasPrefix(a, "--mode="):
			err = o.setMode(strings.TrimPrefix(a, "--mode="))
		case a == "--bench":
			err = o.setBench()
		case a == "--test":
			err = o.setTest()
		case a == "--no-warnings":
			o.noWarnings = true
			if o.warnings {
				err = plainError{errors.New("USAGE: -k, --warnings conflicts with --no-warnings")}
			}
		case a == "--":
			o.params, o.named = splitProgramArgs(o.params, args[i+1:])
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			err = fmt.Errorf("unknown option %s", a)
		case o.list && !haveProgram:
			listArgs = append(listArgs, a)
		case !haveProgram:
			o.filename = a
			haveProgram = true
		default:
			o.params = append(o.params, a)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.list {
		o.listVerbose = o.verbose
		return o, o.listOperand(listArgs)
	}
	if !haveProgram || o.filename == "" && o.program == "" {
		return nil, fmt.Errorf("USAGE: filename or -e 'program' required")
	}
	if o.command != "" && o.pid != 0 {
		return nil, errors.New("USAGE: Cannot use both -c and -p.")
	}
	return o, o.container.check()
}

// checkPid fails when no process pid exists, before anything is loaded:
// the program would otherwise attach, see the process gone and exit as if
// it had traced it.
func checkPid(pid int) error {
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("Failed to attach to pid %d: No such process", pid)
	}
	return nil
}

// debugStages are the -d stages to print.
type debugStages struct {
	ast, codegen bool
}

// validStages lists the stages -d takes, for its error.
const validStages = "ast, codegen, all"

// unsupportedStages are the stages bpftrace v0.26 accepts that gtrace has
// nothing to show for, with why.
var unsupportedStages = map[string]string{
	"codegen-opt": "gtrace generates BPF instructions directly, with no optimisation pass; -d codegen shows them",
	"libbpf":      "gtrace loads programs with cilium/ebpf, not libbpf",
	"verifier":    "gtrace does not print the verifier log",
	"types":       "gtrace does not print its types",
}

// parse adds the stages of one -d argument, a comma separated list, as
// bpftrace v0.26 does: empty entries are skipped and "all" means every
// stage. The stages of bpftrace's debug builds, "dis" and "parse", are
// unknown to it in a release build, and so to gtrace.
func (d *debugStages) parse(arg string) error {
	for _, s := range strings.Split(arg, ",") {
		switch s {
		case "":
		case "ast":
			d.ast = true
		case "codegen":
			d.codegen = true
		case "all":
			d.ast, d.codegen = true, true
		default:
			if why, ok := unsupportedStages[s]; ok {
				return fmt.Errorf("-d %s is not supported: %s", s, why)
			}
			return fmt.Errorf("USAGE: invalid option for -d: %s (valid stages: %s)", s, validStages)
		}
	}
	return nil
}

// readScript returns the script's name in messages and its text: the
// -e program, the file, or stdin for "-".
func readScript(o *options) (string, []byte, error) {
	switch {
	case o.source != nil:
		return o.filename, o.source, nil
	case o.filename == "":
		return "stdin", []byte(o.program), nil
	case o.filename == "-":
		src, err := io.ReadAll(os.Stdin)
		return "stdin", src, err
	}
	src, err := os.ReadFile(o.filename)
	if err != nil {
		return "", nil, fmt.Errorf("failed to open file '%s': %s", o.filename, runtime.Strerror(err))
	}
	return o.filename, src, nil
}

// trace compiles and runs the program.
func trace(o *options, stdout, stderr io.Writer) error {
	name, src, err := readScript(o)
	if err != nil {
		return err
	}
	// Name a missing privilege before the checker reads tracefs, which
	// would only say "permission denied".
	if err := runtime.CheckPrivileges(); err != nil {
		return err
	}
	if o.pid != 0 {
		if err := checkPid(o.pid); err != nil {
			return err
		}
	}
	if o.noFeature["kprobe_multi"] {
		kernel.HasKprobeMulti = func() bool { return false }
	}
	if o.noFeature["uprobe_multi"] {
		probe.HasUprobeMulti = func() bool { return false }
	}
	copts := &compiler.Options{
		Name:        name,
		IncludeDirs: o.includeDirs,
		Includes:    o.includes,
		Check: sema.Options{Config: sema.Config{Unsafe: o.unsafe, Params: o.params, Named: o.named},
			Env: os.LookupEnv, NoFusion: o.noFusion, Pid: o.pid,
			UnwindTarget: o.pid != 0 || o.command != "" || len(o.dwarfPids) > 0},
		Codegen: codegen.Options{Pid: uint32(o.pid), HelperErrors: o.warnings},
	}
	if err := o.container.apply(copts); err != nil {
		return err
	}
	// As in bpftrace v0.26, -d prints and the program still runs.
	if o.debug.ast {
		copts.DumpAST = stderr
	}
	if o.debug.codegen {
		copts.DumpCodegen = stdout
	}
	// The -c child waits, held before its exec, until the probes are
	// attached; code generation needs its pid for cpid.
	var child *runtime.Child
	if o.command != "" {
		var err error
		if child, err = runtime.StartChild(o.command); err != nil {
			return err
		}
		defer child.Kill()
		copts.Codegen.Cpid = uint32(child.Pid)
	}
	prog, err := compiler.Compile(src, copts)
	if err != nil {
		return rendered(stderr, err)
	}
	if prog.Warnings != nil && !o.noWarnings {
		prog.Warnings.Render(stderr)
	}
	if !programOptionsOK(prog.Info.Options, o.named, stderr) {
		return exitCode(1)
	}
	if o.probeFilter != nil {
		prog.Output.Filter(o.probeFilter.MatchString)
		if len(prog.Output.Progs) == 0 {
			if !o.quiet {
				fmt.Fprintln(stdout, "No probes to attach")
			}
			return exitCode(1)
		}
	}

	if o.emitELF != "" {
		return writeELF(o.emitELF, prog.Output)
	}
	if err := checkStackMaps(o, prog.Output); err != nil {
		return err
	}
	w := stdout
	if o.outFile != "" {
		f, err := os.Create(o.outFile)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw, flushIdle, flush := bufferedOutput(w, o.buffering)
	defer flush()
	var printer output.Printer = output.NewText(bw, stderr)
	switch o.format {
	case "json":
		printer = output.NewJSON(bw)
	case "folded":
		printer = output.NewFolded(bw, stderr)
	}
	var files *stackFiles
	var stacks *output.StackRecorder
	if o.flameGraph != "" || o.pprofFile != "" {
		if files, err = createStackFiles(o); err != nil {
			return err
		}
		defer files.close()
		stacks = output.NewStackRecorder(printer)
		printer = stacks
	}
	ropts := &runtime.Options{Printer: printer, Stderr: stderr, Verbose: o.verbose,
		MissingProbes: prog.Info.Config.MissingProbes,
		DryRun:        o.dryRun, Quiet: o.quiet, Stats: o.stats, Flush: flushIdle, Bench: o.mode == "bench", Test: o.mode == "test",
		NoWarnings: o.noWarnings}
	if os.Getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED") != "" {
		// bpftrace's own test runner sets this to learn when the probes
		// are attached; gtrace says so the same way.
		ropts.Notify = func() {
			fmt.Fprintln(bw, "__BPFTRACE_NOTIFY_PROBES_ATTACHED")
			flush()
		}
	}
	ropts.UnwindPids = append([]int{o.pid}, o.dwarfPids...)
	if child != nil && prog.Output.Spec.Maps[codegen.DwRowsMap] != nil && !o.dryRun {
		// dw_ustack reads the tables of the libraries the child maps.
		if err := child.RunToEntry(); err != nil {
			return err
		}
		ropts.UnwindPids = append(ropts.UnwindPids, child.Pid)
	}
	if child != nil {
		ropts.Attached = child.Release
		ropts.Wait = child.Wait
		ropts.Cpid = child.Pid
	} else if o.pid != 0 {
		ropts.Wait = func() { runtime.WaitPid(o.pid) }
		ropts.Pid = o.pid
	}
	if o.serve != nil {
		if err := o.serve(prog, ropts); err != nil {
			return err
		}
	}
	code, err := runtime.Run(prog.Output, ropts)
	if err != nil {
		return rendered(stderr, prog.Locate(err))
	}
	if files != nil {
		if err := files.write(stacks.Maps(), stderr); err != nil {
			return err
		}
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}

// rendered prints a located error with its place in the script and
// returns the exit code that says so; other errors come back as they are.
func rendered(stderr io.Writer, err error) error {
	var located *compiler.Error
	if !errors.As(err, &located) {
		return err
	}
	located.Render(stderr)
	return exitCode(1)
}

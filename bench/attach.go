package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gtrace/kernel"
	"gtrace/symbol"
)

// AttachConfig says what Attach measures.
type AttachConfig struct {
	Tracers []Command
	// Runs is how many times each point is measured; the best counts.
	Runs int
	// Kprobes attaches kernel functions rather than syscall tracepoints;
	// Uprobes, functions of the C library.
	Kprobes, Uprobes bool
	Log              io.Writer
}

// AttachPoint is what attaching one set of probes cost one tracer, each
// phase the best of the runs.
type AttachPoint struct {
	Probes string `json:"probes"` // what the script attaches
	N      int    `json:"n"`
	Tracer string `json:"tracer"`
	// Start is exec to the attach line: parsing, compiling, and loading
	// where the tracer loads before attaching (gtrace does; bpftrace 0.17
	// loads each program as it attaches it). bpftrace 0.17 prints
	// "Attaching N probes..." on stdout before attaching; gtrace and
	// current bpftrace print "Attached N probes" on stderr after it, so
	// their Start includes attaching.
	Start time.Duration `json:"start_ns"`
	// Attach is that line to the last new file descriptor of the
	// process: its last perf event or BPF link; an upper bound of a
	// millisecond or so when attaching is over by the first look.
	Attach time.Duration `json:"attach_ns"`
	// Detach is SIGINT to exit, what a user waits for: stopping the
	// probes, printing a count per probe, and detaching where the
	// tracer waits for it (gtrace leaves it to a process of its own,
	// see runtime/keeper.go).
	Detach time.Duration `json:"detach_ns"`
}

// AttachResult is a whole run of Attach.
type AttachResult struct {
	Date    string        `json:"date"`
	Kernel  string        `json:"kernel"`
	Runs    int           `json:"runs"`
	Tracers []string      `json:"tracers"`
	Points  []AttachPoint `json:"points"`
}

// probeSet is a script of N probes.
type probeSet struct {
	name   string
	n      int
	script string
}

// attachSettle is how long the count of a tracer's file descriptors must
// stay the same, after its "Attaching" line, for it to count as
// attached. Attaching hundreds of probes opens a descriptor every few
// milliseconds.
const attachSettle = time.Second

// Attach times, for each tracer, starting, attaching and detaching sets
// of 1, 10, 100 and all probes of a kind, the tracers interleaved run by
// run. It needs root.
func Attach(cfg *AttachConfig) (*AttachResult, error) {
	sets, err := attachSets(cfg.Kprobes, cfg.Uprobes)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gtrace-bench-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	release, err := kernelRelease()
	if err != nil {
		return nil, err
	}
	res := &AttachResult{Date: today(), Kernel: release, Runs: cfg.Runs}
	for _, c := range cfg.Tracers {
		res.Tracers = append(res.Tracers, c.Name)
	}
	best := make([][]AttachPoint, len(sets))
	for run := range cfg.Runs {
		for i, set := range sets {
			file := filepath.Join(dir, fmt.Sprintf("attach-%d.bt", i))
			if err := os.WriteFile(file, []byte(set.script), 0o644); err != nil {
				return nil, fmt.Errorf("write script: %w", err)
			}
			for j, c := range cfg.Tracers {
				p, err := timeAttach(c, file)
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", set.name, c.Name, err)
				}
				p.Probes, p.N, p.Tracer = set.name, set.n, c.Name
				fmt.Fprintf(cfg.Log, "run %d, %s, %s: start %v, attach %v, detach %v\n",
					run+1, set.name, c.Name, p.Start, p.Attach, p.Detach)
				if run == 0 {
					best[i] = append(best[i], p)
					continue
				}
				b := &best[i][j]
				b.Start, b.Attach, b.Detach = min(b.Start, p.Start), min(b.Attach, p.Attach), min(b.Detach, p.Detach)
			}
		}
	}
	for _, b := range best {
		res.Points = append(res.Points, b...)
	}
	return res, nil
}

// attachSets lists the probe sets: the first 1, 10 and 100 syscall entry
// tracepoints and all of tracepoint:syscalls:*; or the first 1, 10 and
// 100 traceable vfs_ and ext4_ functions and all of kprobe:vfs_*; or the
// first 1 and 10 of the C library's str* functions and all of them.
func attachSets(kprobes, uprobes bool) ([]probeSet, error) {
	body := " { @[probe] = count(); }\n"
	if uprobes {
		libc, err := symbol.ResolveBinary("libc")
		if err != nil {
			return nil, err
		}
		funcs, err := symbol.Functions(libc)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, f := range funcs {
			if strings.HasPrefix(f, "str") {
				names = append(names, "uprobe:"+libc+":"+f)
			}
		}
		sets, err := firstN(names, body, 1, 10)
		return append(sets, probeSet{"uprobe:libc:str*", len(names), "uprobe:" + libc + ":str*" + body}), err
	}
	if kprobes {
		vfs, err := kernel.ExpandFunctions("vfs_*")
		if err != nil {
			return nil, err
		}
		ext4, err := kernel.ExpandFunctions("ext4_*")
		if err != nil {
			return nil, err
		}
		var names []string
		for _, f := range append(vfs, ext4...) {
			if !strings.Contains(f, ":") { // in vmlinux, not a module
				names = append(names, "kprobe:"+f)
			}
		}
		sets, err := firstN(names, body, 1, 10, 100)
		return append(sets, probeSet{"kprobe:vfs_*", len(vfs), "kprobe:vfs_*" + body}), err
	}
	tracefs, err := kernel.TracefsDir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(tracefs, "events/syscalls"))
	if err != nil {
		return nil, fmt.Errorf("list syscall tracepoints: %w", err)
	}
	var names []string
	all := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		all++
		if strings.HasPrefix(e.Name(), "sys_enter_") {
			names = append(names, "tracepoint:syscalls:"+e.Name())
		}
	}
	sets, err := firstN(names, body, 1, 10, 100)
	return append(sets, probeSet{"tracepoint:syscalls:*", all, "tracepoint:syscalls:*" + body}), err
}

// firstN makes the sets of the first ns of probes.
func firstN(probes []string, body string, ns ...int) ([]probeSet, error) {
	var sets []probeSet
	for _, n := range ns {
		if len(probes) < n {
			return nil, fmt.Errorf("only %d probes to attach, want %d", len(probes), n)
		}
		sets = append(sets, probeSet{fmt.Sprintf("first %d of %s", n, strings.SplitN(probes[0], ":", 2)[0]), n,
			strings.Join(probes[:n], ",\n") + body})
	}
	return sets, nil
}

// attachEnv lets bpftrace attach all syscall tracepoints; gtrace reads
// the same variables.
var attachEnv = []string{"BPFTRACE_MAX_PROBES=2048", "BPFTRACE_MAX_BPF_PROGS=2048"}

// timeAttach runs c on script and times its phases from the outside, so
// that every tracer is timed alike: the "Attaching" line on its stdout,
// the descriptors it opens, and its exit after SIGINT.
func timeAttach(c Command, script string) (AttachPoint, error) {
	var p AttachPoint
	cmd := exec.Command(c.Argv[0], c.args(script)...)
	cmd.Env = append(os.Environ(), attachEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return p, err
	}
	stderr := &stderrLog{attached: make(chan struct{})}
	attached := stderr.attached
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("start: %w", err)
	}
	attaching := make(chan time.Time, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "Attaching ") {
				attaching <- time.Now()
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	exited := make(chan error, 1)
	fail := func(err error) (AttachPoint, error) {
		cmd.Process.Kill()
		<-drained
		cmd.Wait()
		return p, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	var at time.Time
	select {
	case at = <-attaching:
	case <-attached:
		at = time.Now()
	case <-time.After(exitTimeout):
		return fail(errors.New("no Attaching line"))
	}
	p.Start = at.Sub(start)
	last, err := settle(cmd.Process.Pid, at)
	if err != nil {
		return fail(err)
	}
	p.Attach = last.Sub(at)
	stop := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return fail(err)
	}
	go func() {
		<-drained
		exited <- cmd.Wait()
	}()
	select {
	case err := <-exited:
		if err != nil {
			return p, fmt.Errorf("%w\n%s", err, stderr.String())
		}
	case <-time.After(exitTimeout):
		cmd.Process.Kill()
		return p, fmt.Errorf("no exit within %v of SIGINT", exitTimeout)
	}
	p.Detach = time.Since(stop)
	return p, nil
}

// settle watches the count of the process's file descriptors from since,
// and returns when it last changed, once it has not changed for
// attachSettle. Attaching that ended before the first look counts as
// ending then: an upper bound, a millisecond or so.
func settle(pid int, since time.Time) (time.Time, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	last, count := since, -1
	for time.Since(last) < attachSettle {
		f, err := os.Open(dir)
		if err != nil {
			return last, fmt.Errorf("exited while attaching: %w", err)
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return last, fmt.Errorf("list descriptors: %w", err)
		}
		if len(names) != count {
			last, count = time.Now(), len(names)
		}
		time.Sleep(time.Millisecond)
	}
	return last, nil
}

// WriteAttachTable prints r as a table, each phase with the ratio of
// every other tracer to the first.
func WriteAttachTable(w io.Writer, r *AttachResult) error {
	fmt.Fprintf(w, "Attach and detach, best of %d runs; %s, Linux %s\n", r.Runs, r.Date, r.Kernel)
	fmt.Fprintf(w, "start: exec to the Attaching line; attach: to the last descriptor opened; detach: SIGINT to exit\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	ref := r.Tracers[0]
	fmt.Fprintf(tw, "probes\tN\ttracer\tstart\tattach\tdetach\tstart / %s\tattach / %s\tdetach / %s\t\n", ref, ref, ref)
	var first AttachPoint
	for _, p := range r.Points {
		if p.Tracer == ref {
			first = p
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Probes, p.N, p.Tracer,
			dur(p.Start), dur(p.Attach), dur(p.Detach),
			ratio(float64(p.Start), float64(first.Start)), ratio(float64(p.Attach), float64(first.Attach)),
			ratio(float64(p.Detach), float64(first.Detach)))
	}
	return tw.Flush()
}

func dur(d time.Duration) string { return Duration.format(float64(d)) }

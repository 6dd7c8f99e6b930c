package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// IdleConfig says what Idle measures.
type IdleConfig struct {
	Tracers []Command
	// Runs is how many times each tracer is measured; the best counts.
	Runs int
	// Duration is how long each run traces.
	Duration time.Duration
	Log      io.Writer
}

// IdlePoint is how much a tracer did of its own while it traced system
// calls and printed nothing, the best of the runs.
type IdlePoint struct {
	Tracer string `json:"tracer"`
	// Syscalls is how many system calls the tracer's own threads made
	// over the whole run, start to exit, as its own trace counted them.
	Syscalls uint64 `json:"syscalls"`
	// SwitchesPerSec is the context switches per second of all its
	// threads while tracing, from /proc/PID/task/*/status.
	SwitchesPerSec float64 `json:"switches_per_sec"`
}

// IdleResult is a whole run of Idle.
type IdleResult struct {
	Date       string      `json:"date"`
	Kernel     string      `json:"kernel"`
	Runs       int         `json:"runs"`
	DurationNs int64       `json:"duration_ns"`
	Points     []IdlePoint `json:"points"`
}

// idleScript counts every system call of the machine by command name:
// the tracer's own among them.
const idleScript = "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }\n"

// Idle runs each tracer on idleScript for cfg.Duration, interleaved run
// by run, and measures the system calls and context switches it makes
// itself: a tracer that wakes when it has nothing to do shows in what it
// traces, and costs the machine.
func Idle(cfg *IdleConfig) (*IdleResult, error) {
	dir, err := os.MkdirTemp("", "gtrace-bench-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "idle.bt")
	if err := os.WriteFile(script, []byte(idleScript), 0o644); err != nil {
		return nil, fmt.Errorf("write script: %w", err)
	}
	release, err := kernelRelease()
	if err != nil {
		return nil, err
	}
	res := &IdleResult{Date: today(), Kernel: release, Runs: cfg.Runs, DurationNs: int64(cfg.Duration)}
	for run := range cfg.Runs {
		for i, c := range cfg.Tracers {
			p, err := idleRun(c, script, cfg.Duration)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			fmt.Fprintf(cfg.Log, "run %d, %s: %d own system calls, %.1f context switches/s\n",
				run+1, c.Name, p.Syscalls, p.SwitchesPerSec)
			if run == 0 {
				res.Points = append(res.Points, p)
				continue
			}
			b := &res.Points[i]
			b.Syscalls, b.SwitchesPerSec = min(b.Syscalls, p.Syscalls), min(b.SwitchesPerSec, p.SwitchesPerSec)
		}
	}
	return res, nil
}

// idleRun runs one tracer once.
func idleRun(c Command, script string, d time.Duration) (IdlePoint, error) {
	p := IdlePoint{Tracer: c.Name}
	cmd := exec.Command(c.Argv[0], c.args(script)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return p, err
	}
	stderr := &stderrLog{attached: make(chan struct{})}
	attached := stderr.attached
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("start: %w", err)
	}
	attaching := make(chan struct{})
	output := make(chan string, 1)
	go func() {
		var out strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "Attaching ") {
				close(attaching)
			}
			out.WriteString(sc.Text() + "\n")
		}
		output <- out.String()
	}()
	fail := func(err error) (IdlePoint, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return p, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	select {
	case <-attaching:
	case <-attached:
	case <-time.After(exitTimeout):
		return fail(errors.New("no Attaching line"))
	}
	// Attaching and its settling are not idle.
	time.Sleep(500 * time.Millisecond)
	before, err := ContextSwitches(cmd.Process.Pid)
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	time.Sleep(d)
	after, err := ContextSwitches(cmd.Process.Pid)
	if err != nil {
		return fail(err)
	}
	p.SwitchesPerSec = float64(after-before) / time.Since(start).Seconds()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		return fail(err)
	}
	out := <-output
	if err := cmd.Wait(); err != nil {
		return p, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	// The kernel's command name is the executable's, cut to 15 bytes.
	comm := filepath.Base(c.Argv[0])
	if len(comm) > 15 {
		comm = comm[:15]
	}
	m := regexp.MustCompile(`(?m)^@\[` + regexp.QuoteMeta(comm) + `\]: (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		return p, fmt.Errorf("its trace has no count for its own command %q", comm)
	}
	p.Syscalls, _ = strconv.ParseUint(m[1], 10, 64)
	return p, nil
}

// ContextSwitches adds up the voluntary and involuntary context switches
// of every thread of a process.
func ContextSwitches(pid int) (uint64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no threads of %d: %v", pid, err)
	}
	var n uint64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that has exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				c, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n, nil
}

// WriteIdleTable prints an IdleResult as a table, with each figure's
// ratio to the first tracer's.
func WriteIdleTable(w io.Writer, r *IdleResult) error {
	fmt.Fprintf(w, "Idle tracing of every system call, %v per run, best of %d runs; %s, Linux %s\n",
		time.Duration(r.DurationNs), r.Runs, r.Date, r.Kernel)
	fmt.Fprintf(w, "own syscalls: the tracer's own, start to exit, as it counted them; switches: its threads' context switches while tracing\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	ref := r.Points[0]
	fmt.Fprintf(tw, "tracer\town syscalls\tswitches/s\tsyscalls / %s\tswitches / %s\t\n", ref.Tracer, ref.Tracer)
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t\n", p.Tracer, p.Syscalls, p.SwitchesPerSec,
			ratio(float64(p.Syscalls), float64(ref.Syscalls)), ratio(p.SwitchesPerSec, ref.SwitchesPerSec))
	}
	return tw.Flush()
}

package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Tracer is one tracer under test.
type Tracer struct {
	Name string // "gtrace" or "bpftrace"
	Path string
	Args []string // options before each run's own, such as --no-fusion
}

// exitTimeout bounds a run that should end by itself, and the wait for a
// run's probes to attach: attaching and detaching hundreds of probes
// takes about a minute here.
const exitTimeout = 5 * time.Minute

// completed is a whole run of a tracer, from exec to exit.
type completed struct {
	Wall   time.Duration
	MaxRSS int64 // bytes: the peak resident set of the process
}

// runToExit runs t with args until it exits by itself, and returns its
// wall time and its peak RSS as wait4 reports it. Its output goes to
// /dev/null but for stderr, kept for the error should it fail.
func runToExit(t Tracer, env []string, args ...string) (completed, error) {
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Path, append(slices.Clip(t.Args), args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return completed{}, fmt.Errorf("%s %s: %w\n%s", t.Name, strings.Join(args, " "), err, stderr.Bytes())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return completed{}, fmt.Errorf("%s: no resource usage from wait4", t.Name)
	}
	return completed{Wall: wall, MaxRSS: ru.Maxrss << 10}, nil
}

// tracerRun is a tracer left running on a script until stop.
type tracerRun struct {
	name   string
	cmd    *exec.Cmd
	start  time.Time
	stdout *os.File // a temporary file, read for lost events at the end
	stderr *stderrLog
	done   chan struct{} // closed when the process has exited
	err    error         // how it exited, once done is closed
	progs  *programs
	// lost is how many events the tracer said it lost, once stopped.
	lost uint64
	// killed is set when the tracer ignored SIGINT and was killed.
	killed bool
}

// startTracer starts t with args. The run keeps what it writes to
// stderr, and its stdout in a temporary file, which may be large.
func startTracer(t Tracer, args ...string) (*tracerRun, error) {
	stdout, err := os.CreateTemp("", "gtbench-stdout-")
	if err != nil {
		return nil, fmt.Errorf("temporary file: %w", err)
	}
	os.Remove(stdout.Name())
	s := &tracerRun{name: t.Name, cmd: exec.Command(t.Path, append(slices.Clip(t.Args), args...)...), stdout: stdout,
		stderr: &stderrLog{}, done: make(chan struct{})}
	s.cmd.Stdout, s.cmd.Stderr = stdout, s.stderr
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		stdout.Close()
		return nil, fmt.Errorf("start %s: %w", t.Name, err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	s.progs = newPrograms(s.cmd.Process.Pid)
	return s, nil
}

// pollInterval is how long waitAttached sleeps between looks at the
// tracer's programs: short, but leaving the CPU to the tracer.
const pollInterval = 200 * time.Microsecond

// waitAttached waits until want of the tracer's probe programs have run,
// so are attached, and returns the time since exec. Its own reads of
// /proc fire syscalls:sys_enter_read, so a probe there fires as soon as
// it is attached. It needs BPF stats enabled.
func (s *tracerRun) waitAttached(want int, poke func()) (time.Duration, error) {
	deadline := time.Now().Add(exitTimeout)
	for time.Now().Before(deadline) {
		if poke != nil {
			poke()
		}
		if err := s.progs.refresh(); err != nil {
			return 0, s.exited(err)
		}
		stats, err := s.progs.stats()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.name, err)
		}
		if ran(stats) >= want {
			return time.Since(s.start), nil
		}
		select {
		case <-s.done:
			return 0, s.exited(nil)
		case <-time.After(pollInterval):
		}
	}
	return 0, fmt.Errorf("%s: probes did not fire within %v", s.name, exitTimeout)
}

// exited explains err, met while the tracer should be running, by the
// tracer's exit if it has exited.
func (s *tracerRun) exited(err error) error {
	select {
	case <-s.done:
		return fmt.Errorf("%s exited before its probes fired: %v\n%s", s.name, s.err, s.stderr.String())
	case <-time.After(time.Second):
		return fmt.Errorf("%s: %w", s.name, err)
	}
}

// stopTimeout is how long a run's tracer has to exit after SIGINT
// before it is killed. Once in a while bpftrace 0.17 ignores SIGINT.
const stopTimeout = 30 * time.Second

// stop ends the run as Ctrl-C does, waits for the tracer to exit,
// killing it after stopTimeout, and counts the events it lost.
func (s *tracerRun) stop() error {
	defer s.stdout.Close()
	defer s.progs.close()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("interrupt %s: %w", s.name, err)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
		<-s.done
		s.killed = true
	}
	if s.err != nil && !s.killed {
		return fmt.Errorf("%s: %w\n%s", s.name, s.err, s.stderr.String())
	}
	out, err := readAll(s.stdout)
	if err != nil {
		return fmt.Errorf("%s output: %w", s.name, err)
	}
	// bpftrace 0.17 reports lost events on stdout, gtrace on stderr.
	s.lost = countLost(out) + countLost([]byte(s.stderr.String()))
	return nil
}

// readAll reads f from its start.
func readAll(f *os.File) ([]byte, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// lostLine matches the line by which both tracers report lost events.
var lostLine = regexp.MustCompile(`(?m)^Lost (\d+) events`)

// countLost adds up the lost events reported in a tracer's output.
func countLost(out []byte) uint64 {
	var n uint64
	for _, m := range lostLine.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseUint(string(m[1]), 10, 64) // digits: only overflow fails
		n += v
	}
	return n
}

// attachedLine matches the line gtrace -v prints once every probe is
// attached.
var attachedLine = regexp.MustCompile(`attached \d+ links in (\S+)`)

// reportedAttach returns how long attaching took by gtrace's own -v line.
func (s *tracerRun) reportedAttach() (time.Duration, error) {
	m := attachedLine.FindStringSubmatch(s.stderr.String())
	if m == nil {
		return 0, fmt.Errorf("%s -v printed no 'attached N links in' line", s.name)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		return 0, fmt.Errorf("%s -v attach time: %w", s.name, err)
	}
	return d, nil
}

// stderrLog keeps what a process writes to stderr; the process writes
// while the benchmark reads.
type stderrLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// attached, if set, is closed at the "Attached N probes" line that
	// current bpftrace and gtrace print on stderr once they attached.
	attached chan struct{}
}

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	if l.attached != nil && attachedProbesLine.Match(l.buf.Bytes()) {
		close(l.attached)
		l.attached = nil
	}
	return n, err
}

// attachedProbesLine is the line a tracer prints on stderr once attached.
var attachedProbesLine = regexp.MustCompile(`(?m)^Attached \d+ probes?$`)

func (l *stderrLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

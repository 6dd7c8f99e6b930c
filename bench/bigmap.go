package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"
)

// BigMapConfig says what BigMap measures.
type BigMapConfig struct {
	Tracers []Command
	// Runs is how many times each tracer is measured; the best counts.
	Runs int
	// Keys is how many distinct keys the map gets.
	Keys int
	Log  io.Writer
}

// BigMapPoint is what printing a big map at exit cost a tracer, the best
// of the runs.
type BigMapPoint struct {
	Tracer string `json:"tracer"`
	// Keys is how many map entries the tracer printed.
	Keys int `json:"keys"`
	// ExitNs is the time from SIGINT to the tracer's exit: reading,
	// merging and printing the map.
	ExitNs int64 `json:"exit_ns"`
	// MaxRSS is the peak resident set of the tracer, in bytes.
	MaxRSS int64 `json:"max_rss"`
}

// BigMapResult is a whole run of BigMap.
type BigMapResult struct {
	Date   string        `json:"date"`
	Kernel string        `json:"kernel"`
	Runs   int           `json:"runs"`
	Keys   int           `json:"keys"`
	Points []BigMapPoint `json:"points"`
}

// bigMapComm is the name of the workload, a copy of dd: the script
// counts its reads alone, not those of other dd processes.
const bigMapComm = "gtbigmap"

// bigMapScript gives every read of the workload a key of its own.
const bigMapScript = "tracepoint:syscalls:sys_enter_read /comm == \"" + bigMapComm + "\"/ { @[nsecs] = count(); }\n"

// BigMap runs each tracer on bigMapScript while dd reads cfg.Keys bytes
// one at a time, so that the map holds about cfg.Keys keys, then
// interrupts it and measures the time to exit and the peak RSS: what
// Ctrl-C costs after tracing a busy system.
func BigMap(cfg *BigMapConfig) (*BigMapResult, error) {
	dir, err := os.MkdirTemp("", "gtrace-bench-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "bigmap.bt")
	if err := os.WriteFile(script, []byte(bigMapScript), 0o644); err != nil {
		return nil, fmt.Errorf("write script: %w", err)
	}
	fill, err := copyDD(dir)
	if err != nil {
		return nil, err
	}
	stop, err := enableStats()
	if err != nil {
		return nil, err
	}
	defer stop()
	release, err := kernelRelease()
	if err != nil {
		return nil, err
	}
	res := &BigMapResult{Date: today(), Kernel: release, Runs: cfg.Runs, Keys: cfg.Keys}
	for run := range cfg.Runs {
		for i, c := range cfg.Tracers {
			p, err := bigMapRun(c, script, fill, cfg.Keys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			fmt.Fprintf(cfg.Log, "run %d, %s: %d keys, exit in %v, peak RSS %.1f MB\n",
				run+1, c.Name, p.Keys, time.Duration(p.ExitNs).Round(time.Millisecond), mb(p.MaxRSS))
			if run == 0 {
				res.Points = append(res.Points, p)
				continue
			}
			best := &res.Points[i]
			best.ExitNs = min(best.ExitNs, p.ExitNs)
			best.MaxRSS = min(best.MaxRSS, p.MaxRSS)
		}
	}
	return res, nil
}

// copyDD copies dd into dir under the name bigMapComm.
func copyDD(dir string) (string, error) {
	dd, err := exec.LookPath("dd")
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(dd)
	if err != nil {
		return "", err
	}
	fill := filepath.Join(dir, bigMapComm)
	if err := os.WriteFile(fill, b, 0o755); err != nil {
		return "", fmt.Errorf("copy dd: %w", err)
	}
	return fill, nil
}

// bigMapRun starts c on script, fills its map by running fill, then
// interrupts it and waits for it to exit.
func bigMapRun(c Command, script, fill string, keys int) (BigMapPoint, error) {
	stdout, err := os.CreateTemp("", "gtbench-stdout-")
	if err != nil {
		return BigMapPoint{}, fmt.Errorf("temporary file: %w", err)
	}
	os.Remove(stdout.Name())
	defer stdout.Close()
	s := &tracerRun{name: c.Name, cmd: exec.Command(c.Argv[0], c.args(script)...), stdout: stdout,
		stderr: &stderrLog{}, done: make(chan struct{})}
	// Room for the workload's reads and those of its start; gtrace and
	// bpftrace 0.17 name the setting differently.
	limit := strconv.Itoa(keys + 1000)
	s.cmd.Env = append(os.Environ(), "BPFTRACE_MAX_MAP_KEYS="+limit, "BPFTRACE_MAP_KEYS_MAX="+limit)
	s.cmd.Stdout, s.cmd.Stderr = stdout, s.stderr
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		return BigMapPoint{}, fmt.Errorf("start: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	s.progs = newPrograms(s.cmd.Process.Pid)
	defer s.progs.close()
	if _, err := s.waitAttached(1, nil); err != nil {
		s.cmd.Process.Kill()
		<-s.done
		return BigMapPoint{}, err
	}
	dd := exec.Command(fill, "if=/dev/zero", "of=/dev/null", "bs=1", "count="+strconv.Itoa(keys))
	if out, err := dd.CombinedOutput(); err != nil {
		s.cmd.Process.Kill()
		<-s.done
		return BigMapPoint{}, fmt.Errorf("workload: %w\n%s", err, out)
	}
	start := time.Now()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		return BigMapPoint{}, fmt.Errorf("interrupt: %w", err)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
		<-s.done
		return BigMapPoint{}, fmt.Errorf("no exit within %v of SIGINT", stopTimeout)
	}
	exit := time.Since(start)
	if s.err != nil {
		return BigMapPoint{}, fmt.Errorf("%w\n%s", s.err, s.stderr.String())
	}
	ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return BigMapPoint{}, fmt.Errorf("no resource usage from wait4")
	}
	out, err := readAll(stdout)
	if err != nil {
		return BigMapPoint{}, fmt.Errorf("output: %w", err)
	}
	return BigMapPoint{Tracer: c.Name, Keys: bytes.Count(out, []byte("\n@[")), ExitNs: int64(exit),
		MaxRSS: ru.Maxrss << 10}, nil
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// WriteBigMapTable prints r as a table, with ratios to bpftrace, or to
// the first tracer when bpftrace was not run.
func WriteBigMapTable(w io.Writer, r *BigMapResult) error {
	fmt.Fprintf(w, "Printing a map of %d keys at exit (@[nsecs] = count()), best of %d runs; %s, Linux %s\n",
		r.Keys, r.Runs, r.Date, r.Kernel)
	fmt.Fprintf(w, "exit: SIGINT to exit, reading, merging and printing the map; RSS: peak resident set\n\n")
	ref := r.Points[0]
	for _, p := range r.Points {
		if p.Tracer == "bpftrace" {
			ref = p
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "tracer\tkeys\texit\tpeak RSS\texit / %s\tRSS / %s\t\n", ref.Tracer, ref.Tracer)
	for _, p := range r.Points {
		fmt.Fprintf(tw, "%s\t%d\t%.3f s\t%.1f MB\t%s\t%s\t\n", p.Tracer, p.Keys, time.Duration(p.ExitNs).Seconds(),
			mb(p.MaxRSS), ratio(float64(p.ExitNs), float64(ref.ExitNs)), ratio(float64(p.MaxRSS), float64(ref.MaxRSS)))
	}
	return tw.Flush()
}

package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// tracers lists the tracers in the order of the table's columns.
func (cfg *Config) tracers() [2]Tracer { return [2]Tracer{cfg.Gtrace, cfg.Bpftrace} }

// bestRuns runs each tracer runs times with the arguments args gives it,
// alternating between them so that both meet the same state of the
// machine, and keeps the least wall time and the least peak RSS of each.
func bestRuns(cfg *Config, runs int, env []string, args func(Tracer) []string) ([2]completed, error) {
	var best [2]completed
	for i := range runs {
		for j, t := range cfg.tracers() {
			c, err := runToExit(t, env, args(t)...)
			if err != nil {
				return best, err
			}
			fmt.Fprintf(cfg.Log, "  %s: %v, %d KiB\n", t.Name, c.Wall.Round(time.Microsecond), c.MaxRSS>>10)
			if i == 0 || c.Wall < best[j].Wall {
				best[j].Wall = c.Wall
			}
			if i == 0 || c.MaxRSS < best[j].MaxRSS {
				best[j].MaxRSS = c.MaxRSS
			}
		}
	}
	return best, nil
}

// sameArgs gives both tracers the same arguments.
func sameArgs(args ...string) func(Tracer) []string {
	return func(Tracer) []string { return args }
}

// wallAndRSS makes the two rows of a whole run.
func wallAndRSS(what, wallTarget, rssTarget string, b [2]completed) []Row {
	return []Row{
		{Figure: what + ": wall time", Target: wallTarget, Unit: Duration,
			Gtrace: float64(b[0].Wall), Bpftrace: float64(b[1].Wall)},
		{Figure: what + ": peak RSS", Target: rssTarget, Unit: Bytes,
			Gtrace: float64(b[0].MaxRSS), Bpftrace: float64(b[1].MaxRSS)},
	}
}

// startup times a script that exits at once: start-up and teardown.
func startup(cfg *Config) ([]Row, error) {
	b, err := bestRuns(cfg, cfg.Runs, nil, sameArgs("-e", `BEGIN { exit(); }`))
	if err != nil {
		return nil, err
	}
	return wallAndRSS("`BEGIN { exit(); }`", "< 20 ms", "< 15 MiB", b), nil
}

// histScript is a tracepoint and hist() one-liner that exits by itself.
const histScript = `tracepoint:syscalls:sys_enter_read { @bytes = hist(args->count); } interval:ms:100 { exit(); }`

// histOneLiner times a typical one-liner from exec to exit, 0.1 s traced.
func histOneLiner(cfg *Config) ([]Row, error) {
	b, err := bestRuns(cfg, cfg.Runs, nil, sameArgs("-e", histScript))
	if err != nil {
		return nil, err
	}
	return wallAndRSS("tracepoint + `hist()`, exit after 0.1 s", "", "", b), nil
}

// attachScript is the one-liner whose attach is timed.
const attachScript = `tracepoint:syscalls:sys_enter_read { @[comm] = count(); }`

// attachTime times exec to the first event of a tracepoint one-liner,
// which is when its probe is attached; and, by gtrace's -v line, how much
// of that attaching alone takes.
func attachTime(cfg *Config) ([]Row, error) {
	restore, err := enableStats()
	if err != nil {
		return nil, err
	}
	defer restore()
	var best [2]time.Duration
	var attach time.Duration
	for i := range cfg.Runs {
		for j, t := range cfg.tracers() {
			args := []string{"-e", attachScript}
			if j == 0 {
				args = append([]string{"-v"}, args...)
			}
			var d time.Duration
			s, err := runTracer(cfg.Log, t, args, func(s *tracerRun) (err error) {
				d, err = s.waitAttached(1, nil)
				return err
			})
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(cfg.Log, "  %s: %v\n", t.Name, d.Round(time.Microsecond))
			if i == 0 || d < best[j] {
				best[j] = d
			}
			if j == 0 {
				a, err := s.reportedAttach()
				if err != nil {
					return nil, err
				}
				if i == 0 || a < attach {
					attach = a
				}
			}
		}
	}
	return []Row{
		{Figure: "tracepoint one-liner: exec to first event", Target: "< 50 ms", Unit: Duration,
			Gtrace: float64(best[0]), Bpftrace: float64(best[1])},
		{Figure: "of which attaching (gtrace -v)", Unit: Duration, Gtrace: float64(attach)},
	}, nil
}

// runTracer runs t with args, calls during while it runs, and stops it.
// The run it returns keeps all that the tracer wrote to stderr. A
// tracer that had to be killed is logged: what during measured stands.
func runTracer(log io.Writer, t Tracer, args []string, during func(*tracerRun) error) (*tracerRun, error) {
	s, err := startTracer(t, args...)
	if err != nil {
		return nil, err
	}
	err = during(s)
	if serr := s.stop(); err == nil {
		err = serr
	}
	if s.killed {
		fmt.Fprintf(log, "  %s did not exit within %v of SIGINT: killed\n", t.Name, stopTimeout)
	}
	return s, err
}

// compileLong times both tracers on a generated 1000-line script up to
// bytecode: gtrace --dry-run, which also loads every program through the
// verifier, and bpftrace --emit-elf, which stops at the ELF file.
func compileLong(cfg *Config) ([]Row, error) {
	dir, err := os.MkdirTemp("", "gtbench-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "long.bt")
	if err := os.WriteFile(script, []byte(GenerateProgram(1000)), 0o644); err != nil {
		return nil, fmt.Errorf("write script: %w", err)
	}
	elf := filepath.Join(dir, "long.o")
	b, err := bestRuns(cfg, cfg.Runs, nil, func(t Tracer) []string {
		if t.Name == cfg.Gtrace.Name {
			return []string{"--dry-run", script}
		}
		return []string{"--emit-elf", elf, script}
	})
	if err != nil {
		return nil, err
	}
	return []Row{{Figure: "1000-line script: `gtrace --dry-run`, `bpftrace --emit-elf`", Unit: Duration,
		Gtrace: float64(b[0].Wall), Bpftrace: float64(b[1].Wall)}}, nil
}

// latencyScript times read(2) from entry to exit into a histogram.
const latencyScript = `tracepoint:syscalls:sys_enter_read { @start[tid] = nsecs; } ` +
	`tracepoint:syscalls:sys_exit_read /@start[tid]/ { @ns = hist(nsecs - @start[tid]); delete(@start[tid]); }`

// eventScripts are the scripts whose generated code is costed per event,
// with how many tracepoints each attaches to. dd's reads fire them.
var eventScripts = []struct {
	name, src   string
	attachments int
}{
	{"`@ = count()`", `tracepoint:syscalls:sys_enter_read { @ = count(); }`, 1},
	{"`@[pid] = count()`", `tracepoint:syscalls:sys_enter_read { @[pid] = count(); }`, 1},
	{"`@[pid, comm] = count()`", `tracepoint:syscalls:sys_enter_read { @[pid, comm] = count(); }`, 1},
	{"`@ = hist(args->count)`", `tracepoint:syscalls:sys_enter_read { @ = hist(args->count); }`, 1},
	{"entry/exit timing into `hist` (per pair)", latencyScript, 2},
	{"`printf` per event", `tracepoint:syscalls:sys_enter_read { printf("%d %d\n", pid, args->count); }`, 1},
	// dd's reads go through libc's read: one uprobe hit each.
	{"uprobe on libc `read`, `@ = count()`", `uprobe:libc:read { @ = count(); }`, 1},
	{"uretprobe on libc `read`, `@ = hist(retval)`", `uretprobe:libc:read { @ = hist(retval); }`, 1},
}

// perEvent costs the generated code of each event script by the kernel's
// own accounting: the run time its programs spend over a dd workload,
// divided by the reads they traced; the least of cfg.Rounds rounds.
func perEvent(cfg *Config) ([]Row, error) {
	restore, err := enableStats()
	if err != nil {
		return nil, err
	}
	defer restore()
	counter, err := newReadCounter()
	if err != nil {
		return nil, err
	}
	defer counter.close()
	var rows []Row
	for _, es := range eventScripts {
		var cost [2]float64
		var lost [2]uint64
		for j, t := range cfg.tracers() {
			s, err := runTracer(cfg.Log, t, []string{"-e", es.src}, func(s *tracerRun) error {
				if _, err := s.waitAttached(es.attachments, readOnce); err != nil {
					return err
				}
				var err error
				cost[j], err = leastCost(cfg, s.progs, counter)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", es.src, err)
			}
			lost[j] = s.lost
			fmt.Fprintf(cfg.Log, "  %s, %s: %.0f ns per event, %d events lost\n", es.name, t.Name, cost[j], lost[j])
		}
		name := "per event: " + es.name
		if lost != [2]uint64{} {
			// A lost event costs less than a delivered one, in both tracers.
			name += fmt.Sprintf(" (lost events: gtrace %d, bpftrace %d)", lost[0], lost[1])
		}
		rows = append(rows, Row{Figure: name, Unit: NsPerEvent, Gtrace: cost[0], Bpftrace: cost[1]})
	}
	return rows, nil
}

// roundPause comes before each round of the per-event workload, for the
// tracer's user space to empty the buffers the last one filled: a round
// that found them full would cost refused records, not delivered ones.
const roundPause = 500 * time.Millisecond

// leastCost runs the dd workload cfg.Rounds times and returns the least
// cost per event of the programs.
func leastCost(cfg *Config, progs *programs, counter *readCounter) (float64, error) {
	least := math.Inf(1)
	for range cfg.Rounds {
		time.Sleep(roundPause)
		before, err := progs.stats()
		if err != nil {
			return 0, err
		}
		reads, err := counter.count()
		if err != nil {
			return 0, err
		}
		dd := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=1", fmt.Sprintf("count=%d", cfg.Events))
		if out, err := dd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("dd: %w\n%s", err, out)
		}
		after, err := progs.stats()
		if err != nil {
			return 0, err
		}
		n, err := counter.count()
		if err != nil {
			return 0, err
		}
		c, err := costPerEvent(before, after, n-reads)
		if err != nil {
			return 0, err
		}
		least = min(least, c)
	}
	return least, nil
}

// wildcardScript attaches to every syscall tracepoint: several hundred.
const wildcardScript = `tracepoint:syscalls:* { @[probe] = count(); }`

// wildcard times attaching, 0.1 s of tracing, and detaching every
// syscall tracepoint. bpftrace needs its probe and program limits raised
// for it.
func wildcard(cfg *Config) ([]Row, error) {
	env := []string{"BPFTRACE_MAX_PROBES=1024", "BPFTRACE_MAX_BPF_PROGS=1024"}
	// bpftrace wants -c's program by a path that names one binary.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return nil, fmt.Errorf("find sleep: %w", err)
	}
	b, err := bestRuns(cfg, cfg.WildcardRuns, env, sameArgs("-c", sleep+" 0.1", "-e", wildcardScript))
	if err != nil {
		return nil, err
	}
	return []Row{{Figure: "`tracepoint:syscalls:*`: attach, 0.1 s traced, detach", Target: "< 1 s", Unit: Duration,
		Gtrace: float64(b[0].Wall), Bpftrace: float64(b[1].Wall)}}, nil
}

// uprobeWallScript counts libc read calls; dd's reads make them.
const uprobeWallScript = `uprobe:libc:read { @ = count(); }`

// uprobeWall is the whole cost of a uprobe hit as the traced program
// feels it: the trap into the kernel, the program, the return. It is the
// extra wall time of a dd workload with the probe attached, over the
// same workload untraced, per read; the least of cfg.Rounds rounds each.
func uprobeWall(cfg *Config) ([]Row, error) {
	restore, err := enableStats() // for waitAttached
	if err != nil {
		return nil, err
	}
	defer restore()
	base, err := leastDD(cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Log, "  untraced: %v\n", base)
	var cost [2]float64
	for j, t := range cfg.tracers() {
		_, err := runTracer(cfg.Log, t, []string{"-e", uprobeWallScript}, func(s *tracerRun) error {
			if _, err := s.waitAttached(1, readOnce); err != nil {
				return err
			}
			traced, err := leastDD(cfg)
			cost[j] = float64(traced-base) / float64(cfg.Events)
			fmt.Fprintf(cfg.Log, "  %s: %v, %.0f ns per read\n", t.Name, traced, cost[j])
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", uprobeWallScript, err)
		}
	}
	return []Row{{Figure: "per event, whole: uprobe on libc `read` as dd feels it", Unit: NsPerEvent,
		Gtrace: cost[0], Bpftrace: cost[1]}}, nil
}

// leastDD is the least wall time of cfg.Rounds runs of the dd workload.
func leastDD(cfg *Config) (time.Duration, error) {
	least := time.Duration(math.MaxInt64)
	for range cfg.Rounds {
		dd := exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=1", fmt.Sprintf("count=%d", cfg.Events))
		start := time.Now()
		if out, err := dd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("dd: %w\n%s", err, out)
		}
		least = min(least, time.Since(start))
	}
	return least, nil
}

// readOnce makes one read through libc, for waitAttached: a uprobe on
// libc's read fires only when a program reads through libc.
func readOnce() { exec.Command("dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=1").Run() }

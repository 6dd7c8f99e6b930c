package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"gtrace/bench/floor"
	"gtrace/bench/workload"
)

// FloorName names the floor tracer in results: the hand-written programs
// of package floor, loaded by the bench itself.
const FloorName = "floor"

// OverheadConfig says what Overhead measures.
type OverheadConfig struct {
	// Tracers are measured side by side with the floor, in this order.
	Tracers []Command
	Scripts []Script
	// Events is the size of the workload: dd bs=1 count=Events.
	Events int
	// Runs is how many times each point is measured; the best counts.
	Runs int
	// Kprobes runs the scripts on vfs_read as written, rather than on
	// the read system call's tracepoints.
	Kprobes bool
	// CPU is the CPU the workload is pinned to.
	CPU int
	// Log receives progress, a line per measurement.
	Log io.Writer
}

// Point is what one tracer cost on one script: the best of the runs.
type Point struct {
	Script int    `json:"script"`
	Name   string `json:"name"`
	Tracer string `json:"tracer"`
	// WholeNs is the workload's extra wall time per event over the
	// untraced workload: trap, dispatch, program and the tracer's user
	// space, as the traced program feels them.
	WholeNs float64 `json:"whole_ns_per_event"`
	// Slowdown is the extra wall time relative to the untraced workload.
	Slowdown float64 `json:"slowdown"`
	// KernelNs is the programs' run time per run, by the kernel's own
	// accounting (run_time_ns / run_cnt): the generated code alone.
	KernelNs float64 `json:"kernel_ns_per_event"`
	// Runs is how many times the probe ran during that measurement.
	Runs uint64 `json:"runs"`
	// EventRate is the rate of probe runs during the best whole run.
	EventRate float64 `json:"events_per_second"`
	// Lost is the events the tracer said it could not deliver, over
	// every run of the point.
	Lost uint64 `json:"lost"`
}

// OverheadResult is a whole run of Overhead.
type OverheadResult struct {
	Date    string   `json:"date"`
	Kernel  string   `json:"kernel"`
	CPUs    int      `json:"cpus"`
	Events  int      `json:"events"`
	Runs    int      `json:"runs"`
	Kprobes bool     `json:"kprobes"`
	Tracers []string `json:"tracers"`
	// BaselineNs is the untraced workload's wall time per event, the
	// best of every untraced run.
	BaselineNs float64 `json:"baseline_ns_per_event"`
	Points     []Point `json:"points"`
}

// sample is one measurement of one point.
type sample struct {
	wall   time.Duration // of the traced workload
	kernel float64       // ns per run, 0 if nothing ran
	runs   uint64        // probe runs during the in-kernel workload
	lost   uint64
}

// Overhead runs every script under every tracer and the floor, Runs
// times, interleaved: each run goes through all scripts, and each script
// through all tracers, with an untraced workload before each script, so
// that drift of the machine meets every tracer alike. It needs root.
func Overhead(cfg *OverheadConfig) (*OverheadResult, error) {
	dir, err := os.MkdirTemp("", "gtrace-bench-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	files := map[int]string{}
	for _, s := range cfg.Scripts {
		files[s.N] = filepath.Join(dir, fmt.Sprintf("%02d.bt", s.N))
		if err := os.WriteFile(files[s.N], []byte(s.Source(cfg.Kprobes)+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("write script: %w", err)
		}
	}
	var libc string // only the uprobe scripts need it
	if slices.ContainsFunc(cfg.Scripts, Script.Uprobe) {
		if libc, err = floor.Libc(); err != nil {
			return nil, err
		}
	}
	res, err := newResult(cfg)
	if err != nil {
		return nil, err
	}
	baseline := time.Duration(math.MaxInt64)
	best := map[[2]int]*sample{} // by script and tracer (0 is the floor)
	for run := range cfg.Runs {
		for _, s := range cfg.Scripts {
			untraced, err := workload.DD(cfg.CPU, cfg.Events)
			if err != nil {
				return nil, err
			}
			baseline = min(baseline, untraced.Wall)
			for i := range len(cfg.Tracers) + 1 {
				var m sample
				if i == 0 {
					m, err = measureFloor(cfg, s, libc)
				} else {
					m, err = measureCommand(cfg, s, cfg.Tracers[i-1], files[s.N])
				}
				if err != nil {
					return nil, fmt.Errorf("script %02d (%s), %s: %w", s.N, s.Name, res.Tracers[i], err)
				}
				fmt.Fprintf(cfg.Log, "run %d, %02d %s, %s: %v (untraced %v), %.0f ns per run, %d runs, %d lost\n",
					run+1, s.N, s.Name, res.Tracers[i], m.wall, untraced.Wall, m.kernel, m.runs, m.lost)
				best[[2]int{s.N, i}] = bestOf(best[[2]int{s.N, i}], m)
			}
		}
	}
	res.BaselineNs = float64(baseline) / float64(cfg.Events)
	for _, s := range cfg.Scripts {
		for i, name := range res.Tracers {
			m := best[[2]int{s.N, i}]
			extra := float64(m.wall - baseline)
			res.Points = append(res.Points, Point{
				Script: s.N, Name: s.Name, Tracer: name,
				WholeNs:   extra / float64(cfg.Events),
				Slowdown:  extra / float64(baseline),
				KernelNs:  m.kernel,
				Runs:      m.runs,
				EventRate: float64(m.runs) / m.wall.Seconds(),
				Lost:      m.lost,
			})
		}
	}
	return res, nil
}

func newResult(cfg *OverheadConfig) (*OverheadResult, error) {
	release, err := kernelRelease()
	if err != nil {
		return nil, err
	}
	res := &OverheadResult{
		Date:    today(),
		Kernel:  release,
		CPUs:    runtime.NumCPU(),
		Events:  cfg.Events,
		Runs:    cfg.Runs,
		Kprobes: cfg.Kprobes,
		Tracers: []string{FloorName},
	}
	for _, c := range cfg.Tracers {
		res.Tracers = append(res.Tracers, c.Name)
	}
	return res, nil
}

// bestOf keeps the least perturbation: the least wall time and the least
// cost per run, each from whichever run had it, and adds up the losses.
func bestOf(old *sample, m sample) *sample {
	if old == nil {
		return &m
	}
	b := *old
	b.wall = min(b.wall, m.wall)
	if m.kernel > 0 && (b.kernel == 0 || m.kernel < b.kernel) {
		b.kernel, b.runs = m.kernel, m.runs
	}
	b.lost += m.lost
	return &b
}

// measureFloor measures the floor of script s: the bench loads it
// itself, so it is attached when Load returns.
func measureFloor(cfg *OverheadConfig, s Script, libc string) (sample, error) {
	f, err := floor.Load(s.N, floor.Options{Kprobes: cfg.Kprobes, Libc: libc})
	if err != nil {
		return sample{}, err
	}
	defer f.Close()
	return measureAttached(cfg, f.Programs(), func() (uint64, error) { return f.Lost() })
}

// measureCommand starts a tracer on script s, waits for its probes to
// fire, measures, and stops it.
func measureCommand(cfg *OverheadConfig, s Script, c Command, file string) (sample, error) {
	var m sample
	disable, err := enableStats() // waitAttached watches run counts
	if err != nil {
		return m, err
	}
	defer func() { disable() }()
	var poke func()
	if s.Uprobe() {
		poke = readOnce
	}
	tr, err := runTracer(cfg.Log, c.tracer(), c.args(file), func(tr *tracerRun) error {
		if s.probes == 0 {
			// Nothing fires: bpftrace does not even load an empty
			// BEGIN. Started is when the tracer stops opening files.
			if _, err := settle(tr.cmd.Process.Pid, time.Now()); err != nil {
				return err
			}
		} else if _, err := tr.waitAttached(s.probes, poke); err != nil {
			return err
		}
		disable()
		disable = func() {}
		m, err = measureAttached(cfg, tr.progs.list(), nil)
		return err
	})
	if err != nil {
		return m, err
	}
	m.lost = tr.lost
	return m, nil
}

// measureAttached measures attached programs two ways: the workload's
// wall time with BPF statistics off, as the traced program feels the
// probes; then the programs' run time per run over a second workload,
// with statistics on only for it. lost, if not nil, counts the events
// the programs could not deliver.
func measureAttached(cfg *OverheadConfig, progs []*ebpf.Program, lost func() (uint64, error)) (sample, error) {
	var m sample
	traced, err := workload.DD(cfg.CPU, cfg.Events)
	if err != nil {
		return m, err
	}
	m.wall = traced.Wall
	disable, err := enableStats()
	if err != nil {
		return m, err
	}
	defer disable()
	before, err := statsOf(progs)
	if err != nil {
		return m, err
	}
	if _, err := workload.DD(cfg.CPU, cfg.Events); err != nil {
		return m, err
	}
	after, err := statsOf(progs)
	if err != nil {
		return m, err
	}
	m.kernel, m.runs = perRun(before, after)
	if lost != nil {
		m.lost, err = lost()
	}
	return m, err
}

// statsOf reads the run count and run time of each program.
func statsOf(progs []*ebpf.Program) ([]ebpf.ProgramStats, error) {
	out := make([]ebpf.ProgramStats, len(progs))
	for i, p := range progs {
		s, err := p.Stats()
		if err != nil {
			return nil, fmt.Errorf("program statistics: %w", err)
		}
		out[i] = *s
	}
	return out, nil
}

// perRun is the programs' run time between two readings per event: per
// run of the program that ran most, so that a script of an entry and a
// return probe costs both per event.
func perRun(before, after []ebpf.ProgramStats) (ns float64, runs uint64) {
	var total time.Duration
	for i := range after {
		total += after[i].Runtime - before[i].Runtime
		runs = max(runs, after[i].RunCount-before[i].RunCount)
	}
	if runs == 0 {
		return 0, 0
	}
	return float64(total.Nanoseconds()) / float64(runs), runs
}

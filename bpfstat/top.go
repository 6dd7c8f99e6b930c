package bpfstat

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// TopOptions shape a `gtrace top` run.
type TopOptions struct {
	Interval time.Duration // between samples
	Once     bool          // one sample after one interval, then return
	JSON     bool
	// Sort is the column to sort by, largest first: cpu, runs, avg, id
	// or name (ascending).
	Sort string
	// Filter keeps the programs whose name, type, attach point or owner
	// contains it.
	Filter string
	Out    io.Writer
	Errs   io.Writer
	// Done ends the refreshing view.
	Done <-chan struct{}
}

// Row is a program over one sampling interval.
type Row struct {
	Program
	AvgNs      uint64  `json:"avg_ns"`
	RunsPerSec float64 `json:"runs_per_sec"`
	CPUPercent float64 `json:"cpu_percent"`
}

// Top samples every BPF program each interval and prints what it cost.
// Statistics are on only while Top holds a BPF_ENABLE_STATS descriptor;
// the kernel turns them off when it is closed, however gtrace exits.
func Top(opts TopOptions) error {
	if StatsOn() {
		fmt.Fprintln(opts.Errs, "note: BPF statistics were already on; counts include runs from before gtrace started")
	}
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		return fmt.Errorf("enable BPF statistics: %w", err)
	}
	defer stats.Close()
	prev, err := Snapshot()
	if err != nil {
		return err
	}
	for {
		start := time.Now()
		select {
		case <-opts.Done:
			return nil
		case <-time.After(opts.Interval):
		}
		cur, err := Snapshot()
		if err != nil {
			return err
		}
		rows := diff(prev, cur, time.Since(start))
		rows = filter(rows, opts.Filter)
		sortRows(rows, opts.Sort)
		if err := show(opts, rows); err != nil {
			return err
		}
		if opts.Once {
			return nil
		}
		prev = cur
	}
}

// StatsOn says whether the kernel's BPF statistics are on already: then
// run counts include runs from before the caller turned them on. They
// are on while the sysctl says so, or while any process holds a
// BPF_ENABLE_STATS descriptor, which the sysctl does not show.
func StatsOn() bool {
	b, err := os.ReadFile("/proc/sys/kernel/bpf_stats_enabled")
	if err == nil && strings.TrimSpace(string(b)) == "1" {
		return true
	}
	return len(StatsHolders()) > 0
}

// StatsHolders lists the processes that hold a BPF_ENABLE_STATS
// descriptor, by pid.
func StatsHolders() []int {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	var pids []int
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err != nil || target != "anon_inode:bpf-stats" {
			continue
		}
		pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
		if err == nil && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// diff turns two snapshots into rows over the time between them.
func diff(prev, cur []Program, d time.Duration) []Row {
	before := map[uint32]Program{}
	for _, p := range prev {
		before[p.ID] = p
	}
	rows := make([]Row, 0, len(cur))
	for _, p := range cur {
		r := Row{Program: p}
		if p.Runs > 0 {
			r.AvgNs = p.RunTimeNs / p.Runs
		}
		b := before[p.ID]
		if secs := d.Seconds(); secs > 0 && p.Runs >= b.Runs {
			r.RunsPerSec = float64(p.Runs-b.Runs) / secs
			r.CPUPercent = float64(p.RunTimeNs-b.RunTimeNs) / float64(d.Nanoseconds()) * 100
		}
		rows = append(rows, r)
	}
	return rows
}

func filter(rows []Row, f string) []Row {
	if f == "" {
		return rows
	}
	var out []Row
	for _, r := range rows {
		text := strings.Join(append(append([]string{r.Name, r.Type}, r.Attach...), r.Owners...), " ")
		if strings.Contains(text, f) {
			out = append(out, r)
		}
	}
	return out
}

func sortRows(rows []Row, key string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch key {
		case "runs":
			return a.Runs > b.Runs
		case "avg":
			return a.AvgNs > b.AvgNs
		case "id":
			return a.ID < b.ID
		case "name":
			return a.Name < b.Name
		}
		return a.CPUPercent > b.CPUPercent
	})
}

// show writes one sample: a JSON record, or a table, which the
// refreshing view draws over the last one.
func show(opts TopOptions, rows []Row) error {
	if opts.JSON {
		b, err := json.Marshal(struct {
			Type string `json:"type"`
			Data []Row  `json:"data"`
		}{"programs", rows})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(opts.Out, "%s\n", b)
		return err
	}
	var b strings.Builder
	if !opts.Once {
		b.WriteString("\x1b[H\x1b[2J") // home, clear screen
	}
	fmt.Fprintf(&b, "%7s %-16s %-16s %12s %10s %9s %6s  %-24s %s\n",
		"ID", "TYPE", "NAME", "RUN_CNT", "RUNS/S", "AVG_NS", "CPU%", "OWNERS", "ATTACH")
	for _, r := range rows {
		fmt.Fprintf(&b, "%7d %-16s %-16s %12d %10.0f %9d %6.2f  %-24s %s\n", r.ID, r.Type, r.Name,
			r.Runs, r.RunsPerSec, r.AvgNs, r.CPUPercent, strings.Join(r.Owners, ","), strings.Join(r.Attach, ","))
	}
	_, err := io.WriteString(opts.Out, b.String())
	return err
}

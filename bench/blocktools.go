package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// The block I/O tools, from exec to their first traced I/O: `gtrace tools
// NAME` against libbpf-tools' NAME (BCC's CO-RE tools, Debian's package
// libbpf-tools).
//
// A tool traces an I/O once its programs on the raw tracepoints
// block_rq_issue and block_rq_complete have both run: it has seen a
// request issued and completed. The bench starts the tool, then, until
// then, writes 4 KiB with O_DIRECT to a file of its own under /var/tmp,
// so that a request is issued and completes at once, and looks at the
// programs the tool's links hold (by the tp_name and prog_id of its
// link fds in /proc/PID/fdinfo), with BPF statistics on. The same
// measure serves both tools, whatever each attaches besides.

// blockTools are the tools measured.
var blockTools = []string{"biolatency", "biosnoop"}

// blockToolsVersus names libbpf-tools in the table.
const blockToolsVersus = "libbpf-tools"

// blockToolsFigure measures each of blockTools, cfg.Runs times each,
// alternating gtrace's and libbpf-tools'. A libbpf-tools tool that
// cannot run here is logged with its error, and has no figure.
func blockToolsFigure(cfg *Config) ([]Row, error) {
	restore, err := enableStats()
	if err != nil {
		return nil, err
	}
	defer restore()
	w, err := newDirectWriter()
	if err != nil {
		return nil, err
	}
	defer w.close()
	var rows []Row
	for _, name := range blockTools {
		tracers := [2]Tracer{
			{Name: "gtrace tools " + name, Path: cfg.Gtrace.Path, Args: []string{"tools", name}},
			{Name: "libbpf-tools " + name, Path: filepath.Join(cfg.LibbpfTools, name)},
		}
		var best [2]time.Duration
		var failed [2]error
		for range cfg.Runs {
			for j, t := range tracers {
				if failed[j] != nil {
					continue
				}
				d, err := firstIO(t, w)
				if err != nil {
					if j == 0 {
						return nil, err
					}
					failed[j] = err
					fmt.Fprintf(cfg.Log, "  %s cannot run here: %v\n", t.Name, err)
					continue
				}
				fmt.Fprintf(cfg.Log, "  %s: %v\n", t.Name, d.Round(time.Microsecond))
				if best[j] == 0 || d < best[j] {
					best[j] = d
				}
			}
		}
		rows = append(rows, Row{Figure: "`" + name + "`: exec to first traced I/O", Target: "< 50 ms", Unit: Duration,
			Gtrace: float64(best[0]), Bpftrace: float64(best[1]), Versus: blockToolsVersus})
	}
	return rows, nil
}

// firstIO starts t and returns the time from its exec until it has
// traced an I/O that w made.
func firstIO(t Tracer, w *directWriter) (time.Duration, error) {
	s, err := startTracer(t)
	if err != nil {
		return 0, err
	}
	defer s.stop()
	links := map[string]*ebpf.Program{} // by tracepoint
	defer func() {
		for _, p := range links {
			p.Close()
		}
	}()
	deadline := time.Now().Add(exitTimeout)
	for time.Now().Before(deadline) {
		if err := w.write(); err != nil {
			return 0, err
		}
		if err := blockLinks(s.cmd.Process.Pid, links); err != nil {
			return 0, s.exited(err)
		}
		if ranAll(links, "block_rq_issue", "block_rq_complete") {
			return time.Since(s.start), nil
		}
		select {
		case <-s.done:
			return 0, s.exited(errors.New("exited"))
		case <-time.After(pollInterval):
		}
	}
	return 0, fmt.Errorf("%s traced no I/O within %v", t.Name, exitTimeout)
}

// ranAll says whether the programs on each of tracepoints have run.
func ranAll(links map[string]*ebpf.Program, tracepoints ...string) bool {
	for _, tp := range tracepoints {
		p := links[tp]
		if p == nil {
			return false
		}
		s, err := p.Stats()
		if err != nil || s.RunCount == 0 {
			return false
		}
	}
	return true
}

// blockLinks adds to links the programs of the raw tracepoint links on
// block_* tracepoints that process pid holds, by tracepoint.
func blockLinks(pid int, links map[string]*ebpf.Program) error {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list file descriptors: %w", err)
	}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err != nil || target != "anon_inode:bpf_link" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		tp, id := fdinfoField(info, "tp_name"), fdinfoField(info, "prog_id")
		if !strings.HasPrefix(tp, "block_") || links[tp] != nil {
			continue
		}
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			continue
		}
		if p, err := ebpf.NewProgramFromID(ebpf.ProgramID(n)); err == nil {
			links[tp] = p
		}
	}
	return nil
}

// fdinfoField returns the value of the line "name:\tvalue" of an fdinfo.
func fdinfoField(info []byte, name string) string {
	for _, line := range bytes.Split(info, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(name+":")); ok {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}

// directWriter writes 4 KiB with O_DIRECT to a file of its own under
// /var/tmp, on the machine's disk: a request issued and completed, by
// the time write returns.
type directWriter struct {
	f   *os.File
	buf []byte
}

func newDirectWriter() (*directWriter, error) {
	dir, err := os.MkdirTemp("/var/tmp", "gtbench-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "io")
	defer os.RemoveAll(dir) // the open file stays
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_DIRECT, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s with O_DIRECT: %w", path, err)
	}
	// A page-aligned buffer, as O_DIRECT wants.
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &directWriter{f: f, buf: mem}
	return w, w.write()
}

func (w *directWriter) write() error {
	if _, err := w.f.WriteAt(w.buf, 0); err != nil {
		return fmt.Errorf("direct write: %w", err)
	}
	return nil
}

func (w *directWriter) close() {
	w.f.Close()
	unix.Munmap(w.buf)
}

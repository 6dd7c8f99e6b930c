package tools

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// The block I/O tools of `gtrace tools` against Debian's libbpf-tools
// (BCC 0.26's CO-RE tools, `apt-get install libbpf-tools`), both at once
// around the same workload: direct writes and reads of a loop device that
// nothing else uses, by a copy of dd under a name of its own, each dd's
// pid recorded. Both tracers trace the loop device alone (-d), so each
// must count exactly the workload's requests.
//
// libbpf-tools 0.26 cannot run everywhere: its biosnoop attaches an
// fentry program to blk_account_io_start, and its biotop kprobes on it.
// Where the kernel refuses what a tool needs, the test says which and
// skips it, having seen the refusal.

// The loop workload: libbpfWrites writes of libbpfWriteSize bytes from
// the device's start, then libbpfReads reads of libbpfReadSize.
const (
	libbpfWrites    = 40
	libbpfWriteSize = 8192
	libbpfReads     = 24
	libbpfReadSize  = 4096
)

// libbpfToolPath returns the path of a tool of the libbpf-tools package.
func libbpfToolPath(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("dpkg", "-L", "libbpf-tools").Output()
	if err != nil {
		testutils.Skip(t, fmt.Sprintf("libbpf-tools is not installed (apt-get install libbpf-tools): dpkg -L: %v", err))
	}
	for _, p := range strings.Fields(string(out)) {
		if filepath.Base(p) == name && strings.Contains(p, "bin/") {
			return p
		}
	}
	t.Fatalf("libbpf-tools has no %s:\n%s", name, out)
	return ""
}

// loopWorkload is the loop device, the copy of dd and the script that
// writes, then reads, the device, each dd's pid first written to w.pid
// and r.pid.
func loopWorkload(t *testing.T) (w *workload, cmd string) {
	t.Helper()
	testutils.RequireRoot(t)
	w = newWorkload(t)
	w.loopDevice(t)
	w.uniqueComm(t, "gtlb", "/usr/bin/dd")
	dd := w.path(w.comm)
	cmd = w.script(t, "loop.sh", fmt.Sprintf(
		"/bin/sh -c 'echo $$ >%[1]s/w.pid; exec %[2]s if=/dev/zero of=%[3]s bs=%[4]d count=%[5]d oflag=direct status=none'\n"+
			"/bin/sh -c 'echo $$ >%[1]s/r.pid; exec %[2]s if=%[3]s of=/dev/null bs=%[6]d count=%[7]d iflag=direct status=none'\n",
		w.dir, dd, w.dev, libbpfWriteSize, libbpfWrites, libbpfReadSize, libbpfReads))
	return w, cmd
}

// loopRequests are the workload's requests on the loop device.
func loopRequests() (writes, reads []request) {
	for i := range libbpfWrites {
		writes = append(writes, request{uint64(i * libbpfWriteSize / 512), libbpfWriteSize})
	}
	for i := range libbpfReads {
		reads = append(reads, request{uint64(i * libbpfReadSize / 512), libbpfReadSize})
	}
	return writes, reads
}

// tracerProc is a tracer left running while the workload runs.
type tracerProc struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan struct{}
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// errExited is what startLibbpfTracer returns for a tracer that exited before
// it was ready; its output says why.
var errExited = errors.New("exited before it was ready")

// startLibbpfTracer starts path with args and waits until ready says it is
// tracing, for at most 30 s. A tracer that exits first is returned,
// with errExited, for its output to be read.
func startLibbpfTracer(t *testing.T, ready func(*tracerProc) bool, path string, args ...string) (*tracerProc, error) {
	t.Helper()
	p := &tracerProc{cmd: exec.Command(path, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	deadline := time.Now().Add(30 * time.Second)
	for !ready(p) {
		select {
		case <-p.done:
			return p, errExited
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %q not ready after 30 s; stdout:\n%s\nstderr:\n%s", path, args, p.stdout.String(), p.stderr.String())
		}
	}
	return p, nil
}

// stop sends SIGINT and waits for the tracer to exit, for at most 30 s.
func (p *tracerProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit within 30 s of SIGINT; stderr:\n%s", p.cmd.Path, p.stderr.String())
	}
	if s := p.cmd.ProcessState; !s.Success() && s.ExitCode() != 130 {
		t.Fatalf("%s %q: %v; stderr:\n%s", p.cmd.Path, p.cmd.Args[1:], s, p.stderr.String())
	}
}

// holdsLinks is ready once the process holds n BPF links.
func holdsLinks(n int) func(*tracerProc) bool {
	return func(p *tracerProc) bool {
		infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", p.cmd.Process.Pid))
		links := 0
		for _, f := range infos {
			if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte("\nlink_type:")) {
				links++
			}
		}
		return links >= n
	}
}

// printsFirst is ready once the tracer's stdout starts with line.
func printsFirst(line string) func(*tracerProc) bool {
	return func(p *tracerProc) bool { return strings.HasPrefix(p.stdout.String(), line+"\n") }
}

// runAtOnce starts libbpf-tools' tool (ready once it holds links links)
// and gtrace's, runs the workload and stops both. It returns nil for
// libbpf-tools' tool if that exited before it was ready.
func runAtOnce(t *testing.T, cmd string, lib string, links int, libArgs []string, gtraceBanner string, gtraceArgs []string) (libOut *tracerProc, gtOut string) {
	t.Helper()
	l, err := startLibbpfTracer(t, holdsLinks(links), lib, libArgs...)
	if err != nil {
		return l, ""
	}
	g, err := startLibbpfTracer(t, printsFirst(gtraceBanner), harness.Bin(), append([]string{"tools"}, gtraceArgs...)...)
	if err != nil {
		t.Fatalf("gtrace %q %v; stderr:\n%s", gtraceArgs, err, g.stderr.String())
	}
	if out, err := exec.Command("/bin/sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("workload: %v\n%s", err, out)
	}
	l.stop(t)
	g.stop(t)
	harness.CheckNoPanic(t, g.stderr.String())
	return l, g.stdout.String()
}

// refusal explains why a libbpf-tools tool that exited before attaching
// could not run, by what its stderr and the kernel show, or fails t.
func refusal(t *testing.T, tool string, p *tracerProc) string {
	t.Helper()
	stderr := p.stderr.String()
	switch {
	case strings.Contains(stderr, "prog 'blk_account_io_start': BPF program load failed: Operation not permitted") && fentryRefused(t):
		return fmt.Sprintf("libbpf-tools' %s attaches an fentry program to blk_account_io_start, "+
			"and this kernel refuses fentry programs (EPERM, for root too)", tool)
	case strings.Contains(stderr, "failed to create kprobe 'blk_account_io_start") && !kernelHasKprobes():
		return fmt.Sprintf("libbpf-tools' %s kprobes blk_account_io_start, "+
			"and this kernel has no kprobes (no kprobe PMU, no kprobe_events in tracefs)", tool)
	}
	t.Fatalf("libbpf-tools' %s exited before it attached, for no reason this test knows: %v\nstderr:\n%s",
		tool, p.cmd.ProcessState, stderr)
	return ""
}

// fentryRefused tells whether the kernel refuses gtrace an fentry program.
func fentryRefused(t *testing.T) bool {
	r := harness.Gtrace(t, "--dry-run", "-e", "fentry:vfs_read { @ = count(); }")
	return r.Code != 0 && strings.Contains(r.Stderr, "this kernel does not allow fentry probes")
}

// kernelHasKprobes tells whether the kernel can make kprobes: a kprobe
// PMU, or kprobe_events in tracefs.
func kernelHasKprobes() bool {
	for _, p := range []string{"/sys/bus/event_source/devices/kprobe", "/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

func TestLibbpfToolsDiff(t *testing.T) {
	t.Run("biolatency", func(t *testing.T) {
		lib := libbpfToolPath(t, "biolatency")
		w, cmd := loopWorkload(t)
		disk := filepath.Base(w.dev)
		banner := "Tracing block device I/O... Hit Ctrl-C to end."
		l, g := runAtOnce(t, cmd, lib, 2, []string{"-d", disk}, banner, []string{"biolatency", "-d", disk})
		if g == "" {
			t.Fatalf("libbpf-tools' biolatency exited: %v\n%s", l.cmd.ProcessState, l.stderr.String())
		}
		lh, ok1 := harness.ParseBCCHist(l.stdout.String(), "", "usecs")
		gh, ok2 := harness.ParseHist(g, "@usecs:")
		want := libbpfWrites + libbpfReads
		if !ok1 || !ok2 || lh.Total() != want || gh.Total() != want {
			t.Errorf("latencies: libbpf-tools %d, gtrace %d, want %d each", lh.Total(), gh.Total(), want)
		}
		// Each I/O is timed twice, from its issue to its completion,
		// by probes a few hundred ns apart: the histograms, in the
		// same unit and bounds, match but for I/Os near a bound.
		if d := medianBucket(lh) - medianBucket(gh); d < -1 || d > 1 {
			t.Errorf("median latency buckets (log2 µs) differ by %d", d)
		}
		t.Logf("µs by bucket: libbpf-tools %v, gtrace %v", lh, gh)
		if t.Failed() {
			t.Logf("libbpf-tools:\n%s\ngtrace:\n%s", l.stdout.String(), g)
		}
	})

	t.Run("bitesize", func(t *testing.T) {
		lib := libbpfToolPath(t, "bitesize")
		w, cmd := loopWorkload(t)
		disk := filepath.Base(w.dev)
		banner := "Tracing block device I/O... Hit Ctrl-C to end."
		l, g := runAtOnce(t, cmd, lib, 1, []string{"-c", w.comm, "-d", disk}, banner,
			[]string{"bitesize", "--comm=" + w.comm, "-d", disk})
		if g == "" {
			t.Fatalf("libbpf-tools' bitesize exited: %v\n%s", l.cmd.ProcessState, l.stderr.String())
		}
		want := harness.Log2Hist{
			harness.Log2Bucket(libbpfWriteSize / 1024): libbpfWrites,
			harness.Log2Bucket(libbpfReadSize / 1024):  libbpfReads,
		}
		lh, _ := harness.ParseBCCHist(l.stdout.String(), "Process Name = "+w.comm, "Kbytes")
		gh, _ := harness.ParseHist(g, "@kbytes["+w.comm+"]:")
		if !maps.Equal(lh, want) || !maps.Equal(gh, want) {
			t.Errorf("Kbytes by bucket: libbpf-tools %v, gtrace %v; want %v\nlibbpf-tools:\n%s\ngtrace:\n%s",
				lh, gh, want, l.stdout.String(), g)
		}
	})

	t.Run("biosnoop", func(t *testing.T) {
		lib := libbpfToolPath(t, "biosnoop")
		w, cmd := loopWorkload(t)
		disk := filepath.Base(w.dev)
		header := "TIME(s)     COMM            PID     DISK      T    SECTOR     BYTES   LAT(ms)"
		// fentry, a kprobe, and tp_btf on block_rq_issue and _complete.
		l, g := runAtOnce(t, cmd, lib, 4, []string{"-d", disk}, header, []string{"biosnoop", "-d", disk})
		if g == "" {
			testutils.SkipUnsupported(t, refusal(t, "biosnoop", l))
		}
		wpid, rpid := w.pids(t, "w.pid")[0], w.pids(t, "r.pid")[0]
		writes, reads := loopRequests()
		for name, out := range map[string]string{"libbpf-tools": l.stdout.String(), "gtrace": g} {
			ios, _ := harness.ParseBiosnoop(out)
			got := map[int][]request{}
			for _, io := range ios {
				if io.Comm == w.comm && io.Disk == disk {
					got[io.PID] = append(got[io.PID], request{io.Sector, io.Bytes})
				}
			}
			if !slices.Equal(got[wpid], writes) || !slices.Equal(got[rpid], reads) || len(got) != 2 {
				t.Errorf("%s: %s's I/O on %s by pid: %v; want %d: %v, %d: %v\n%s", name, w.comm, disk, got, wpid, writes, rpid, reads, out)
			}
		}
	})

	t.Run("biotop", func(t *testing.T) {
		lib := libbpfToolPath(t, "biotop")
		w, cmd := loopWorkload(t)
		disk := filepath.Base(w.dev)
		// kprobes on blk_account_io_start and _done, blk_mq_start_request.
		l, g := runAtOnce(t, cmd, lib, 3, []string{"-C"}, "Tracing... Output every 1 secs. Hit Ctrl-C to end",
			[]string{"biotop", "-C"})
		if g == "" {
			testutils.SkipUnsupported(t, refusal(t, "biotop", l))
		}
		wpid, rpid := w.pids(t, "w.pid")[0], w.pids(t, "r.pid")[0]
		writes, reads := loopRequests()
		want := map[int]biotopWant{wpid: {"W", writes}, rpid: {"R", reads}}
		var st unix.Stat_t
		if err := unix.Stat(w.dev, &st); err != nil {
			t.Fatal(err)
		}
		major, minor := int(unix.Major(st.Rdev)), int(unix.Minor(st.Rdev))
		rows, _, err := harness.ParseBiotop(g, "Tracing... Output every 1 secs. Hit Ctrl-C to end")
		if err != nil {
			t.Fatalf("gtrace: %v\n%s", err, g)
		}
		checkBiotopRows(t, rows, w.comm, disk, major, minor, want)
		// libbpf-tools' biotop prints its tables with no banner.
		rows, _, err = harness.ParseBiotop("\n"+l.stdout.String(), "")
		if err != nil {
			t.Fatalf("libbpf-tools: %v\n%s", err, l.stdout.String())
		}
		checkBiotopRows(t, rows, w.comm, disk, major, minor, want)
	})
}

// medianBucket is the bucket of the median count of h, as a power of two.
func medianBucket(h harness.Log2Hist) int {
	half, seen := (h.Total()+1)/2, 0
	for _, b := range slices.Sorted(maps.Keys(h)) {
		if seen += h[b]; seen >= half {
			n := 0
			for ; b > 1; b /= 2 {
				n++
			}
			return n
		}
	}
	return 0
}

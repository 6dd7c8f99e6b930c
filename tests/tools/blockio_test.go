package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// The block I/O tools of `gtrace tools` (tools/storage) on this
// machine's disk: direct writes and reads of a file under /var/tmp by a
// copy of dd under a name of its own, each dd's pid recorded. Direct I/O
// on blocks the file already has makes one request per read or write,
// from dd, and nothing else: no allocation, no page cache. The file's
// extents (FIEMAP) give the sectors the requests must name. Other I/O
// of the machine goes on meanwhile, so the checks pick out dd's by pid
// and name: each pid is first a shell's, which writes the pid to a file
// before it execs dd, and ext4 may write or read a block for that.

// The workload: hostWrites writes of hostWriteSize bytes, then
// hostReads reads of hostReadSize, from the file's start.
const (
	hostWrites    = 40
	hostWriteSize = 8192
	hostReads     = 24
	hostReadSize  = 4096
)

// hostBlock is the workload's file and the disk that holds it.
type hostBlock struct {
	w            *workload // in /var/tmp, with dd under a name of its own
	file         string
	disk         string // the whole disk: vda
	major, minor int    // the disk's
	start        uint64 // the partition's first sector on the disk, 0 for none
	extents      []extent
}

// extent maps a run of the file's bytes to the disk's.
type extent struct {
	logical, physical, length uint64
}

// request is one request the workload makes: its sector and size.
type request struct {
	sector uint64
	bytes  int
}

func newHostBlock(t *testing.T) *hostBlock {
	t.Helper()
	testutils.RequireRoot(t)
	dir, err := os.MkdirTemp("/var/tmp", "gtblk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	hb := &hostBlock{w: &workload{dir: dir}, file: filepath.Join(dir, "data")}

	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		testutils.Skip(t, fmt.Sprintf("/var/tmp is on no block device (%s): %v", sys, err))
	}
	hb.disk = filepath.Base(real)
	if b, err := os.ReadFile(filepath.Join(real, "partition")); err == nil && len(b) > 0 {
		start, err := os.ReadFile(filepath.Join(real, "start"))
		if err != nil {
			t.Fatal(err)
		}
		hb.start, _ = strconv.ParseUint(strings.TrimSpace(string(start)), 10, 64)
		hb.disk = filepath.Base(filepath.Dir(real))
	}
	if _, err := os.Stat(filepath.Join("/sys/block", hb.disk, "mq")); err != nil {
		testutils.Skip(t, fmt.Sprintf("/var/tmp is on %s, which makes no requests of its own (no blk-mq): %v", hb.disk, err))
	}
	var dst unix.Stat_t
	if err := unix.Stat("/dev/"+hb.disk, &dst); err != nil {
		t.Fatal(err)
	}
	hb.major, hb.minor = int(unix.Major(dst.Rdev)), int(unix.Minor(dst.Rdev))

	// The file, written and on disk before the workload overwrites it.
	data := make([]byte, hostWrites*hostWriteSize)
	for i := range data {
		data[i] = byte(i)
	}
	f, err := os.Create(hb.file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	hb.extents, err = fiemap(f)
	f.Close()
	if err != nil {
		t.Fatalf("FIEMAP of %s: %v", hb.file, err)
	}
	hb.w.uniqueComm(t, "gtblk", "/usr/bin/dd")
	return hb
}

// fiemap returns the extents of f, by FS_IOC_FIEMAP.
func fiemap(f *os.File) ([]extent, error) {
	const (
		fsIocFiemap     = 0xC020660B // _IOWR('f', 11, struct fiemap)
		fiemapFlagSync  = 0x1
		extentUnwritten = 0x800
		extentEncoded   = 0x8
		maxExtents      = 256
	)
	type fiemapExtent struct {
		Logical, Physical, Length uint64
		_                         [2]uint64
		Flags                     uint32
		_                         [3]uint32
	}
	type fiemapHeader struct {
		Start, Length                        uint64
		Flags, MappedExtents, ExtentCount, _ uint32
		Extents                              [maxExtents]fiemapExtent
	}
	h := &fiemapHeader{Length: ^uint64(0), Flags: fiemapFlagSync, ExtentCount: maxExtents}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(h))); errno != 0 {
		return nil, errno
	}
	var out []extent
	for _, e := range h.Extents[:h.MappedExtents] {
		if e.Flags&(extentUnwritten|extentEncoded) != 0 {
			return nil, fmt.Errorf("extent %+v is unwritten or encoded", e)
		}
		out = append(out, extent{e.Logical, e.Physical, e.Length})
	}
	return out, nil
}

// requests returns the requests that n direct I/Os of size bytes from
// the file's start make: one each, or one per extent an I/O spans.
func (hb *hostBlock) requests(t *testing.T, n, size int) []request {
	t.Helper()
	var reqs []request
	for i := range n {
		off, end := uint64(i*size), uint64((i+1)*size)
		for off < end {
			j := slices.IndexFunc(hb.extents, func(e extent) bool { return e.logical <= off && off < e.logical+e.length })
			if j < 0 {
				t.Fatalf("no extent holds byte %d of %s: %+v", off, hb.file, hb.extents)
			}
			e := hb.extents[j]
			piece := min(end, e.logical+e.length) - off
			reqs = append(reqs, request{sector: hb.start + (e.physical+off-e.logical)/512, bytes: int(piece)})
			off += piece
		}
	}
	return reqs
}

// command writes the workload's script: the writes, then the reads, by
// the copy of dd, each dd's pid first written to w.pid and r.pid.
func (hb *hostBlock) command(t *testing.T) string {
	t.Helper()
	dd := hb.w.path(hb.w.comm)
	return hb.w.script(t, "blk.sh", fmt.Sprintf(
		"/bin/sh -c 'echo $$ >%[1]s/w.pid; exec %[2]s if=/dev/zero of=%[3]s bs=%[4]d count=%[5]d oflag=direct conv=notrunc status=none'\n"+
			"/bin/sh -c 'echo $$ >%[1]s/r.pid; exec %[2]s if=%[3]s of=/dev/null bs=%[6]d count=%[7]d iflag=direct status=none'\n",
		hb.w.dir, dd, hb.file, hostWriteSize, hostWrites, hostReadSize, hostReads))
}

// pids are the pids of the last run's writing and reading dd.
func (hb *hostBlock) pids(t *testing.T) (writer, reader int) {
	t.Helper()
	return hb.w.pids(t, "w.pid")[0], hb.w.pids(t, "r.pid")[0]
}

// runBlockTool runs `gtrace tools NAME ARGS... -c CMD` to its end.
func runBlockTool(t *testing.T, cmd, name string, args ...string) harness.Result {
	t.Helper()
	r := harness.RunTimeout(t, time.Minute, harness.Bin(), append(append([]string{"tools", name}, args...), "-c", cmd)...)
	if r.Code != 0 {
		t.Fatalf("%s %s: exit code %d, stderr:\n%s", name, strings.Join(args, " "), r.Code, r.Stderr)
	}
	harness.CheckNoPanic(t, r.Stderr)
	return r
}

// TestBlockToolsHost runs biosnoop, bitesize and biotop around the
// workload on this machine's disk: each shows dd's I/O, exactly.
func TestBlockToolsHost(t *testing.T) {
	hb := newHostBlock(t)
	cmd := hb.command(t)
	writes := hb.requests(t, hostWrites, hostWriteSize)
	reads := hb.requests(t, hostReads, hostReadSize)
	t.Logf("%s on %s (%d:%d), from sector %d; %d write requests, %d read requests",
		hb.file, hb.disk, hb.major, hb.minor, hb.start, len(writes), len(reads))

	t.Run("biosnoop", func(t *testing.T) {
		for _, args := range [][]string{nil, {"-Q", "-P"}} {
			r := runBlockTool(t, cmd, "biosnoop", args...)
			wpid, rpid := hb.pids(t)
			checkBiosnoopHost(t, hb, r.Stdout, args != nil, wpid, rpid, writes, reads)
		}
	})
	t.Run("bitesize", func(t *testing.T) {
		r := runBlockTool(t, cmd, "bitesize", "-j")
		want := harness.Log2Hist{}
		for _, rq := range append(slices.Clone(writes), reads...) {
			want[harness.Log2Bucket(uint64(rq.bytes/1024))]++
		}
		got := jsonHist(t, r.Stdout, "@kbytes", hb.w.comm)
		if !maps.Equal(got, want) {
			t.Errorf("@kbytes[%s] by the Kbytes that start each bucket: %v, want %v\n%s", hb.w.comm, got, want, r.Stdout)
		}
		if !strings.HasPrefix(r.Stdout, `{"type": "printf", "data": "Tracing block device I/O... Hit Ctrl-C to end.\n"}`) {
			t.Errorf("output does not start with the banner:\n%s", r.Stdout)
		}
	})
	t.Run("biotop", func(t *testing.T) {
		r := runBlockTool(t, cmd, "biotop", "-C")
		wpid, rpid := hb.pids(t)
		rows, tables, err := harness.ParseBiotop(r.Stdout, "Tracing... Output every 1 secs. Hit Ctrl-C to end")
		if err != nil {
			t.Fatalf("%v:\n%s", err, r.Stdout)
		}
		if tables == 0 {
			t.Fatalf("no table:\n%s", r.Stdout)
		}
		checkBiotopRows(t, rows, hb.w.comm, hb.disk, hb.major, hb.minor, map[int]biotopWant{
			wpid: {"W", writes}, rpid: {"R", reads}})
		if t.Failed() {
			t.Logf("output:\n%s", r.Stdout)
		}
	})
}

// checkBiosnoopHost checks that biosnoop shows the requests of the
// writer and the reader, each once, with their sizes and sectors, and
// nothing else for their pids but what the shell did before its exec.
func checkBiosnoopHost(t *testing.T, hb *hostBlock, out string, extra bool, wpid, rpid int, writes, reads []request) {
	t.Helper()
	header := "TIME(s)     COMM            PID     DISK      T    SECTOR     BYTES   LAT(ms)"
	if extra {
		header = "TIME(s)     COMM            PID     DISK      T    SECTOR     BYTES   P QUE(ms) LAT(ms)"
	}
	ios, other := harness.ParseBiosnoop(out)
	if len(other) != 1 || other[0] != header {
		t.Errorf("lines other than I/O: %q, want the header %q alone", other, header)
	}
	got := map[int][]request{}
	for _, l := range ios {
		if l.PID != wpid && l.PID != rpid || l.Comm == "sh" {
			continue
		}
		got[l.PID] = append(got[l.PID], request{l.Sector, l.Bytes})
		op := "W"
		if l.PID == rpid {
			op = "R"
		}
		if l.Comm != hb.w.comm || l.Disk != hb.disk || !strings.Contains(l.Op, op) || l.Latency <= 0 || l.Latency > 10000 {
			t.Errorf("%+v: want comm %s, disk %s, an op with %s, a latency", l, hb.w.comm, hb.disk, op)
		}
		if extra && (l.Pattern == "" || l.Queued < 0) || !extra && (l.Pattern != "" || l.Queued != -1) {
			t.Errorf("%+v: the -P and -Q columns are wrong", l)
		}
	}
	sortRequests := func(r []request) []request {
		return slices.SortedFunc(slices.Values(r), func(a, b request) int { return int(a.sector) - int(b.sector) })
	}
	if g, w := sortRequests(got[wpid]), sortRequests(writes); !slices.Equal(g, w) {
		t.Errorf("the writer's I/O: %v, want %v", g, w)
	}
	if g, w := sortRequests(got[rpid]), sortRequests(reads); !slices.Equal(g, w) {
		t.Errorf("the reader's I/O: %v, want %v", g, w)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// biotopWant is what biotop must show for one pid, over all its tables.
type biotopWant struct {
	dir      string
	requests []request
}

// checkBiotopRows checks that the rows of each pid of want add up to its
// requests, in one direction, on disk, under comm; rows of the shell
// that the pid was before it ran comm are left out.
func checkBiotopRows(t *testing.T, rows []harness.BiotopRow, comm, disk string, major, minor int, want map[int]biotopWant) {
	t.Helper()
	for pid, w := range want {
		ios, kbytes := 0, 0
		for _, r := range rows {
			if r.PID != pid || r.Comm == "sh" {
				continue
			}
			if r.Comm != comm || r.Dir != w.dir || r.Disk != disk || r.Major != major || r.Minor != minor || r.AvgMs < 0 {
				t.Errorf("row %+v: want %s %s on %s (%d:%d)", r, comm, w.dir, disk, major, minor)
			}
			ios += r.IOs
			kbytes += r.Kbytes
		}
		bytes := 0
		for _, rq := range w.requests {
			bytes += rq.bytes
		}
		if ios != len(w.requests) || kbytes != bytes/1024 {
			t.Errorf("pid %d: %d I/Os, %d Kbytes; want %d, %d", pid, ios, kbytes, len(w.requests), bytes/1024)
		}
	}
}

// jsonHist reads the histogram @name[key] from gtrace's -j output, the
// last time it is printed.
func jsonHist(t *testing.T, out, name, key string) harness.Log2Hist {
	t.Helper()
	var h harness.Log2Hist
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Type string
			Data map[string]map[string][]struct{ Min, Count uint64 }
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "hist" {
			continue
		}
		h = harness.Log2Hist{}
		for _, b := range rec.Data[name][key] {
			if b.Count > 0 {
				h[harness.Log2Bucket(b.Min)] += int(b.Count)
			}
		}
	}
	return h
}

package vm

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
	"gtrace/tests/internal/harness"
)

// The block I/O tools of `gtrace tools` (tools/storage) on the guest's
// nvme0n1, which nothing but the workload uses, so that every count is
// exact: biolatency, biosnoop, bitesize and biotop each run once around
// the same direct writes and reads, issued by tests/testdata/blkio. Each
// blkio is a shell that writes its pid to a file and execs blkio, so the
// tools must name that pid and blkio for each request.
//
// The controller has one I/O queue, so nvme0n1 has an I/O scheduler
// (mq-deadline) and 6.1 issues requests from a kworker, not from
// blkio: on 6.1, which has no block_io_start, the tools must take the
// process at the request's insertion.

// vmBlockJob is one blkio of the workload.
type vmBlockJob struct {
	pidFile string
	write   bool
	size    int
	sectors []int
}

var vmBlockJobs = []vmBlockJob{
	{"w4", true, 4096, []int{0, 8, 16, 24}},
	{"w16", true, 16384, []int{1024, 1056}},
	{"r64", false, 65536, []int{2048, 2176}},
}

// vmBlockWorkload is the script /io.sh that runs the jobs.
func vmBlockWorkload() string {
	var b strings.Builder
	for _, j := range vmBlockJobs {
		op := "read"
		if j.write {
			op = "write"
		}
		fmt.Fprintf(&b, "sh -c 'echo $$ >/tmp/%s.pid; exec /blkio %s /dev/nvme0n1 %d %s'\n", j.pidFile, op, j.size, sectorList(j.sectors))
	}
	return b.String()
}

// vmBlockScript runs each tool around the workload, then prints the pids
// its jobs had, and nvme0n1's device number.
const vmBlockScript = vmShellFuncs + `
section dev cat /sys/block/nvme0n1/dev /sys/block/nvme0n1/queue/scheduler
run() {
	name=$1
	shift
	section $name /gtrace tools "$@" -c "sh /io.sh"
	section $name-pids cat /tmp/w4.pid /tmp/w16.pid /tmp/r64.pid
}
run biolatency biolatency -F -d nvme0n1
run biosnoop biosnoop -Q -d nvme0n1
run bitesize bitesize -d nvme0n1
run biotop biotop -C
`

func TestVMBlockTools(t *testing.T) {
	dir := t.TempDir()
	workload := filepath.Join(dir, "io.sh")
	if err := os.WriteFile(workload, []byte(vmBlockWorkload()), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"/gtrace": vmtest.BuildGtrace(t),
		"/blkio":  buildTestdata(t, "blkio"),
		"/io.sh":  workload,
	}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, NVMe: true, NVMeQueues: 1,
				Timeout: 5 * time.Minute}, vmBlockScript)
			dev := vmLines(sections.get(t, "dev", 0).stdout)
			t.Logf("nvme0n1: %q", dev)
			// pids reads the pids of a run's jobs, by pid file.
			pids := func(t *testing.T, name string) map[string]int {
				f := strings.Fields(sections.get(t, name+"-pids", 0).stdout)
				if len(f) != len(vmBlockJobs) {
					t.Fatalf("pids %q, want %d", f, len(vmBlockJobs))
				}
				m := map[string]int{}
				for i, j := range vmBlockJobs {
					m[j.pidFile], _ = strconv.Atoi(f[i])
				}
				return m
			}
			tool := func(t *testing.T, name string) string {
				s := sections.get(t, name, 0)
				if strings.Contains(s.stderr, "ERROR") || strings.Contains(s.stderr, "WARNING") {
					t.Errorf("stderr:\n%s", s.stderr)
				}
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("stdout:\n%s", s.stdout)
					}
				})
				return s.stdout
			}
			t.Run("biolatency", func(t *testing.T) {
				checkVMBiolatency(t, tool(t, "biolatency"))
			})
			t.Run("biosnoop", func(t *testing.T) {
				checkVMBiosnoop(t, tool(t, "biosnoop"), pids(t, "biosnoop"))
			})
			t.Run("bitesize", func(t *testing.T) {
				checkVMBitesize(t, tool(t, "bitesize"))
			})
			t.Run("biotop", func(t *testing.T) {
				if len(dev) == 0 {
					t.Fatal("no device number for nvme0n1")
				}
				checkVMBiotop(t, tool(t, "biotop"), pids(t, "biotop"), dev[0])
			})
		})
	}
}

// checkVMBiolatency checks biolatency -F: as many latencies of writes and
// of reads as the jobs made requests, and no other operation.
func checkVMBiolatency(t *testing.T, out string) {
	want := map[string]int{}
	for _, j := range vmBlockJobs {
		op := "REQ_OP_READ"
		if j.write {
			op = "REQ_OP_WRITE"
		}
		want[op] += len(j.sectors)
	}
	got := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		op, ok := strings.CutPrefix(line, "@usecs_by_op[")
		if !ok {
			continue
		}
		op = strings.TrimSuffix(op, "]:")
		for _, n := range vmHist(out, line) {
			got[op] += n
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("latencies by operation: %v, want %v", got, want)
	}
	if !strings.HasPrefix(out, "Tracing block device I/O... Hit Ctrl-C to end.\n") {
		t.Error("no banner")
	}
}

// vmBio is a request as biosnoop shows it, less its time and latencies.
type vmBio struct {
	pid    int
	comm   string
	op     string // W or R
	sector uint64
	bytes  int
}

// checkVMBiosnoop checks biosnoop -Q -d nvme0n1: a line for each request
// of the jobs, with blkio's pid, sector and size, and none other.
func checkVMBiosnoop(t *testing.T, out string, pids map[string]int) {
	var want []vmBio
	for _, j := range vmBlockJobs {
		op := "R"
		if j.write {
			op = "W"
		}
		for _, s := range j.sectors {
			want = append(want, vmBio{pids[j.pidFile], "blkio", op, uint64(s), j.size})
		}
	}
	ios, other := harness.ParseBiosnoop(out)
	const header = "TIME(s)     COMM            PID     DISK      T    SECTOR     BYTES   QUE(ms) LAT(ms)"
	if len(other) != 1 || other[0] != header {
		t.Errorf("lines other than I/O: %q, want the header %q alone", other, header)
	}
	var got []vmBio
	for _, l := range ios {
		op := l.Op
		if strings.Contains(op, "W") {
			op = "W"
		} else if strings.Contains(op, "R") {
			op = "R"
		}
		got = append(got, vmBio{l.PID, l.Comm, op, l.Sector, l.Bytes})
		if l.Disk != "nvme0n1" || l.Queued < 0 || l.Latency <= 0 || l.Latency > 10000 || l.Pattern != "" {
			t.Errorf("%+v: want nvme0n1, a queued time and a latency", l)
		}
	}
	order := func(a, b vmBio) int { return int(a.sector) - int(b.sector) }
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Errorf("I/O:\n%v\nwant:\n%v", got, want)
	}
}

// checkVMBitesize checks bitesize -d nvme0n1: one histogram, blkio's,
// with each request in the bucket of its Kbytes.
func checkVMBitesize(t *testing.T, out string) {
	want := harness.Log2Hist{}
	for _, j := range vmBlockJobs {
		want[harness.Log2Bucket(uint64(j.size/1024))] += len(j.sectors)
	}
	got, ok := harness.ParseHist(out, "@kbytes[blkio]:")
	if !ok || !maps.Equal(got, want) {
		t.Errorf("@kbytes[blkio] by the Kbytes that start each bucket: %v, want %v", got, want)
	}
	if n := strings.Count(out, "@kbytes["); n != 1 {
		t.Errorf("%d histograms, want blkio's alone", n)
	}
}

// checkVMBiotop checks biotop -C: the rows of nvme0n1 are the jobs', and
// add up to their requests and Kbytes, by pid.
func checkVMBiotop(t *testing.T, out string, pids map[string]int, dev string) {
	rows, tables, err := harness.ParseBiotop(out, "Tracing... Output every 1 secs. Hit Ctrl-C to end")
	if err != nil {
		t.Fatal(err)
	}
	if tables == 0 {
		t.Fatal("no table")
	}
	type total struct {
		dir         string
		ios, kbytes int
	}
	want := map[int]total{}
	for _, j := range vmBlockJobs {
		dir := "R"
		if j.write {
			dir = "W"
		}
		want[pids[j.pidFile]] = total{dir, len(j.sectors), len(j.sectors) * j.size / 1024}
	}
	got := map[int]total{}
	for _, r := range rows {
		if r.Disk != "nvme0n1" {
			continue
		}
		if fmt.Sprintf("%d:%d", r.Major, r.Minor) != dev || r.Comm != "blkio" {
			t.Errorf("row %+v: want blkio on %s", r, dev)
		}
		g := got[r.PID]
		g.dir = r.Dir
		g.ios += r.IOs
		g.kbytes += r.Kbytes
		got[r.PID] = g
	}
	if !maps.Equal(got, want) {
		t.Errorf("nvme0n1's rows added up by pid: %v, want %v", got, want)
	}
}

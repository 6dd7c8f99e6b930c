package vm

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// The tests here run the tools biomax, rqlat and biostacks together on
// reads of a device-mapper device over nvme0n1, made by
// tests/testdata/blkio: linear, so that a read of the device is a read
// of nvme0n1 at the same sector, but for the sectors of one read, which
// dm-delay holds back vmSlowMs first. That read is the one slow I/O, by
// far: dm-delay holds its bio before passing it on, so the bio of the
// device-mapper device is slow, and the request it makes on nvme0n1 is
// not. Each kernel boots once.

// vmBioReads are the fast reads of the device-mapper device: bytes by
// sector.
var vmBioReads = map[int]int{0: 4096, 8: 4096, 16: 4096, 24: 4096, 2048: 65536, 2176: 65536}

// The slow read: 4096 bytes at vmSlowSector, held back vmSlowMs.
const (
	vmSlowSector = 4096
	vmSlowBytes  = 4096
	vmSlowMs     = 500
)

// vmBioToolsScript is the guest's shell script. $READS4K and $READS64K
// are the sectors of vmBioReads by size, $SLOW is vmSlowSector and
// $DELAY vmSlowMs.
const vmBioToolsScript = vmShellFuncs + `
section dm /blkio dm-delay slow /dev/nvme0n1 $SLOW 8 $DELAY
/gtrace tools biomax -d dm-0 >/tmp/biomax.out 2>/tmp/biomax.err &
biomax=$!
/gtrace tools rqlat -d nvme0n1 >/tmp/rqlat.out 2>/tmp/rqlat.err &
rqlat=$!
/gtrace tools biostacks -d nvme0n1 >/tmp/biostacks.out 2>/tmp/biostacks.err &
biostacks=$!
wait_links $biomax 4 >>/tmp/biomax.err
wait_links $rqlat 2 >>/tmp/rqlat.err
wait_links $biostacks 2 >>/tmp/biostacks.err
section io sh -c "
	/blkio read /dev/dm-0 4096 $READS4K &&
	/blkio read /dev/dm-0 65536 $READS64K &&
	/blkio read /dev/dm-0 4096 $SLOW"
stop biomax $biomax
stop rqlat $rqlat
stop biostacks $biostacks
`

// TestVMBioTools runs biomax, rqlat and biostacks on both kernels.
func TestVMBioTools(t *testing.T) {
	files := map[string]string{
		"/gtrace": vmtest.BuildGtrace(t),
		"/blkio":  buildTestdata(t, "blkio"),
	}
	var reads4k, reads64k []int
	for _, sector := range slices.Sorted(maps.Keys(vmBioReads)) {
		if vmBioReads[sector] == 4096 {
			reads4k = append(reads4k, sector)
		} else {
			reads64k = append(reads64k, sector)
		}
	}
	env := map[string]string{
		"READS4K":  sectorList(reads4k),
		"READS64K": sectorList(reads64k),
		"SLOW":     strconv.Itoa(vmSlowSector),
		"DELAY":    strconv.Itoa(vmSlowMs),
	}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{
				Kernel:  k,
				Files:   files,
				Env:     env,
				NVMe:    true,
				Modules: []string{"dm-mod", "dm-delay"},
				Timeout: 5 * time.Minute,
			}, vmBioToolsScript)
			sections.get(t, "dm", 0)
			sections.get(t, "io", 0)
			t.Run("biomax", func(t *testing.T) {
				checkBiomax(t, sections.get(t, "biomax", 0).stdout)
			})
			t.Run("rqlat", func(t *testing.T) {
				checkRqlat(t, sections.get(t, "rqlat", 0).stdout)
			})
			t.Run("biostacks", func(t *testing.T) {
				checkBiostacks(t, sections.get(t, "biostacks", 0).stdout)
			})
		})
	}
}

// vmBiomaxLine is biomax's line: disk, sector, bytes, latency and the
// number of bios.
var vmBiomaxLine = regexp.MustCompile(`(?m)^(\S+) +(\d+) +(\d+) +(\d+) +(\d+)$`)

// checkBiomax checks that the slowest bio of dm-0 is the slow read, at
// least vmSlowMs slow, of the 7 bios the reads made, and that its stack
// is that of blkio's pread64 system call, submitting the bio.
func checkBiomax(t *testing.T, out string) {
	header, rest, ok := strings.Cut(out, "DISK             SECTOR    BYTES      LAT(ns)     BIOS\n")
	if !ok || header != "Tracing the slowest bio... Hit Ctrl-C to end.\n" {
		t.Fatalf("no banner and header line:\n%s", out)
	}
	m := vmBiomaxLine.FindStringSubmatch(rest)
	if m == nil {
		t.Fatalf("no line for the slowest bio:\n%s", out)
	}
	sector, _ := strconv.Atoi(m[2])
	bytes, _ := strconv.Atoi(m[3])
	ns, _ := strconv.Atoi(m[4])
	bios, _ := strconv.Atoi(m[5])
	if m[1] != "dm-0" || sector != vmSlowSector || bytes != vmSlowBytes || bios != len(vmBioReads)+1 {
		t.Errorf("slowest bio %q: want dm-0, sector %d, %d bytes, of %d bios", m[0], vmSlowSector, vmSlowBytes, len(vmBioReads)+1)
	}
	if ns < vmSlowMs*int(time.Millisecond) || ns > int(10*time.Second) {
		t.Errorf("slowest bio: %d ns, want at least the %d ms of dm-delay", ns, vmSlowMs)
	}
	checkFrames(t, vmFrames(rest[len(m[0]):]), "submit_bio_noacct_nocheck", "__blkdev_direct_IO_simple", "__x64_sys_pread64")
}

// checkRqlat checks rqlat's lines: one for each read's request on
// nvme0n1, the slow one's too, with its sector and bytes.
func checkRqlat(t *testing.T, out string) {
	lines := vmLines(out)
	if len(lines) == 0 || lines[0] != "DISK             SECTOR    BYTES      LAT(ns)" {
		t.Fatalf("no header line:\n%s", out)
	}
	want := maps.Clone(vmBioReads)
	want[vmSlowSector] = vmSlowBytes
	got := map[int]int{}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "nvme0n1" {
			t.Errorf("line %q: want one for a request of nvme0n1", line)
			continue
		}
		sector, _ := strconv.Atoi(f[1])
		bytes, _ := strconv.Atoi(f[2])
		ns, _ := strconv.Atoi(f[3])
		if _, dup := got[sector]; dup || ns <= 0 || ns > int(10*time.Second) {
			t.Errorf("line %q: want one line for each request, with a latency", line)
		}
		got[sector] = bytes
	}
	if !maps.Equal(got, want) {
		t.Errorf("requests by sector: got %v, want %v", got, want)
	}
}

// vmStackHist is a histogram keyed by a kernel stack: its frames and its
// rows.
var vmStackHist = regexp.MustCompile(`(?m)^@usecs\[\n((?: {8}\S+\n)+)\]:\n((?:\[.*\n)+)`)

// checkBiostacks checks biostacks' histograms: the requests of the fast
// reads of nvme0n1 under the stack of blkio's pread64 system call, and
// the slow read's under dm-delay's worker, which submits the bio it held
// back; each stack initializes the request in blk_mq_submit_bio.
func checkBiostacks(t *testing.T, out string) {
	entries := vmStackHist.FindAllStringSubmatch(out, -1)
	if len(entries) != 2 {
		t.Fatalf("%d histograms, want 2, for the two stacks:\n%s", len(entries), out)
	}
	for _, e := range entries {
		frames := vmFrames(e[1])
		n := 0
		for _, row := range strings.Split(e[2], "\n") {
			if m := vmHistLine.FindStringSubmatch(row); m != nil {
				c, _ := strconv.Atoi(m[2])
				n += c
			}
		}
		if slices.Contains(frames, "__x64_sys_pread64") {
			if n != len(vmBioReads) {
				t.Errorf("%d requests under the stack of pread64, want %d", n, len(vmBioReads))
			}
			checkFrames(t, frames, "blk_mq_submit_bio", "__blkdev_direct_IO_simple", "__x64_sys_pread64")
		} else {
			if n != 1 {
				t.Errorf("%d requests under the other stack, want the slow read's", n)
			}
			checkFrames(t, frames, "blk_mq_submit_bio", "process_one_work")
		}
	}
}

// vmFrames returns the functions of the kernel stack printed at the
// start of s, a frame a line, indented by 8 spaces.
func vmFrames(s string) []string {
	var frames []string
	for _, line := range strings.Split(strings.TrimLeft(s, "\n"), "\n") {
		frame, ok := strings.CutPrefix(line, "        ")
		if !ok {
			break
		}
		fn, _, _ := strings.Cut(frame, "+")
		frames = append(frames, fn)
	}
	return frames
}

// checkFrames checks that frames has each of want, in that order from
// the innermost.
func checkFrames(t *testing.T, frames []string, want ...string) {
	t.Helper()
	i := 0
	for _, f := range frames {
		if i < len(want) && f == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("stack %q: want %q, innermost first", frames, want)
	}
}

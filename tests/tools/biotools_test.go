package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// biomax, rqlat and biostacks run on raw tracepoints, which this host's
// kernel has. The tests here run them around dd's direct overwrites of a
// file whose blocks were allocated before, so that the sectors dd writes
// are known: rqlat's lines for them are checked exactly. The other
// tools cannot tell dd's I/O from the rest of the machine's, so they are
// checked for at least dd's. tests/vm/vm_biotools_test.go counts exactly.

// hostBlocks is how many blocks of 4096 bytes dd writes.
const hostBlocks = 64

// ioctl request numbers from linux/fs.h.
const (
	fibmap   = 1 // _IO(0x00, 1): the file system block of a file's block
	figetbsz = 2 // _IO(0x00, 2): the file system's block size
)

// hostFile writes a file of hostBlocks blocks under /var/tmp and returns
// the dd command that overwrites it in place with direct I/O, the disk
// the file is on and the disk's sectors of the file's blocks.
func hostFile(t *testing.T) (dd, disk string, sectors []int) {
	testutils.RequireRoot(t)
	dir, err := os.MkdirTemp("/var/tmp", "biotools")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	name := filepath.Join(dir, "f")
	dd = fmt.Sprintf("/usr/bin/dd if=/dev/zero of=%s bs=4096 count=%d oflag=direct conv=notrunc status=none", name, hostBlocks)
	if out, err := exec.Command("sh", "-c", dd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", dd, err, out)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	// The disk, and where the partition starts on it if the file system
	// is on one.
	sys, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		testutils.Skip(t, "/var/tmp is on no block device")
	}
	disk, start := filepath.Base(sys), 0
	if b, err := os.ReadFile(filepath.Join(sys, "start")); err == nil {
		disk = filepath.Base(filepath.Dir(sys))
		start, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	var bsize int32
	if err := ioctl(f, figetbsz, &bsize); err != nil || bsize <= 0 || 4096%bsize != 0 {
		testutils.Skip(t, fmt.Sprintf("/var/tmp's file system has blocks of %d bytes (%v)", bsize, err))
	}
	for i := int32(0); i < hostBlocks*4096/bsize; i += 4096 / bsize {
		blk := i
		if err := ioctl(f, fibmap, &blk); err != nil || blk == 0 {
			testutils.Skip(t, fmt.Sprintf("/var/tmp's file system maps no block with FIBMAP (%v)", err))
		}
		sectors = append(sectors, start+int(blk)*int(bsize)/512)
	}
	return dd, disk, sectors
}

func ioctl(f *os.File, req uintptr, arg *int32) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), req, uintptr(unsafe.Pointer(arg))); errno != 0 {
		return errno
	}
	return nil
}

// jsonHists sums the counts of the histograms of map name in -j output,
// by key: "" for a map without one, the frames of a stack a line each.
func jsonHists(t *testing.T, out, name string) map[string]int {
	type buckets []struct{ Count int }
	counts := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Type string
			Data map[string]json.RawMessage
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "hist" || rec.Data[name] == nil {
			continue
		}
		var plain buckets
		keyed := map[string]buckets{}
		if json.Unmarshal(rec.Data[name], &plain) == nil {
			keyed[""] = plain
		} else if err := json.Unmarshal(rec.Data[name], &keyed); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for k, bs := range keyed {
			for _, b := range bs {
				counts[k] += b.Count
			}
		}
	}
	return counts
}

// stackCount sums the counts of the stacks that hold the frame fn, and
// checks that each holds every frame of also.
func stackCount(t *testing.T, hists map[string]int, fn string, also ...string) int {
	n := 0
	for stack, count := range hists {
		frames := strings.Fields(stack)
		has := func(fn string) bool {
			return slices.ContainsFunc(frames, func(f string) bool { return strings.HasPrefix(f, fn+"+") })
		}
		if !has(fn) {
			continue
		}
		n += count
		for _, a := range also {
			if !has(a) {
				t.Errorf("stack %q: no %s", frames, a)
			}
		}
	}
	return n
}

// TestBioToolsHost runs biomax, rqlat and biostacks around dd's direct
// writes.
func TestBioToolsHost(t *testing.T) {
	dd, disk, sectors := hostFile(t)
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, out string)
	}{
		{"rqlat", []string{"rqlat", "-d", disk}, func(t *testing.T, out string) {
			// One line for each of dd's writes, with its sector.
			if !strings.HasPrefix(out, "DISK             SECTOR    BYTES      LAT(ns)\n") {
				t.Errorf("no header line")
			}
			lines := map[int]string{}
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) != 4 || f[0] != disk {
					continue
				}
				if sector, _ := strconv.Atoi(f[1]); slices.Contains(sectors, sector) {
					if lines[sector] != "" {
						t.Errorf("lines %q and %q: the same request twice", lines[sector], line)
					}
					lines[sector] = line
					if ns, _ := strconv.Atoi(f[3]); f[2] != "4096" || ns <= 0 || ns > int(10*time.Second) {
						t.Errorf("line %q: want 4096 bytes and a latency", line)
					}
				}
			}
			if len(lines) != len(sectors) {
				t.Errorf("%d of dd's %d writes have a line", len(lines), len(sectors))
			}
		}},
		{"rqlat histogram", []string{"rqlat", "-d", disk, "--histogram", "-j"}, func(t *testing.T, out string) {
			if n := jsonHists(t, out, "@usecs")[""]; n < hostBlocks {
				t.Errorf("%d requests in @usecs, want at least dd's %d", n, hostBlocks)
			}
		}},
		{"biostacks", []string{"biostacks", "-d", disk, "-j"}, func(t *testing.T, out string) {
			// dd's writes under the stack of write(2), from where
			// blk_mq_submit_bio gets the request.
			if n := stackCount(t, jsonHists(t, out, "@usecs"), "vfs_write", "blk_mq_submit_bio"); n < hostBlocks {
				t.Errorf("%d requests under stacks of vfs_write, want at least dd's %d", n, hostBlocks)
			}
		}},
		{"biostacks milliseconds", []string{"biostacks", "-d", disk, "-m", "-j"}, func(t *testing.T, out string) {
			if n := stackCount(t, jsonHists(t, out, "@msecs"), "vfs_write"); n < hostBlocks {
				t.Errorf("%d requests under stacks of vfs_write, want at least dd's %d", n, hostBlocks)
			}
		}},
		{"biomax", []string{"biomax", "-d", disk}, func(t *testing.T, out string) {
			// Which bio is the slowest is the machine's choice; it was
			// submitted where block_bio_queue is traced.
			m := regexp.MustCompile(`(?m)^` + disk + ` +\d+ +\d+ +\d+ +(\d+)\n\n {8}\S+\n {8}\S+\n {8}submit_bio_noacct_nocheck\+`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no slowest bio of %s with a stack from submit_bio_noacct_nocheck", disk)
			}
			if bios, _ := strconv.Atoi(m[1]); bios < hostBlocks {
				t.Errorf("%d bios, want at least dd's %d", bios, hostBlocks)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := harness.RunTimeout(t, time.Minute, harness.Bin(), append(append([]string{"tools"}, tt.args...), "-c", dd)...)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			tt.check(t, r.Stdout)
			if t.Failed() {
				t.Logf("stdout:\n%s", r.Stdout)
			}
		})
	}
}

// TestBiomaxIntervalHost checks that biomax with an interval and a count
// prints as many reports, each with the time, and exits.
func TestBiomaxIntervalHost(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.RunTimeout(t, time.Minute, harness.Bin(), "tools", "biomax", "-T", "1", "2")
	report := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\n(no bio ended|DISK +SECTOR +BYTES +LAT\(ns\) +BIOS\n\S+ +\d+ +\d+ +\d+ +\d+)$`)
	if n := len(report.FindAllString(r.Stdout, -1)); r.Code != 0 || n != 2 {
		t.Errorf("exit code %d, %d reports, want 2:\n%s", r.Code, n, r.Stdout)
	}
}

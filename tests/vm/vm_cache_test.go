package vm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// The tests here run the page-cache tools, cachestat and pagecache, on
// the harness's NVMe namespace nvme0n1: a file of ext2 on it read after
// the caches are dropped, read again, then the device written over. Each
// kernel boots once and runs vmCacheScript; the subtests check its
// sections.

// vmCachePages is the size, in pages, of the file: no more than the 12
// blocks of 4096 bytes that an ext2 inode addresses directly, so that
// reading it reads no indirect block through the page cache.
const vmCachePages = 12

// vmCacheScript is the guest's shell script; $PAGES is vmCachePages.
//
// The workload is tests/testdata/blkio's read-on-signal and
// write-on-signal: each opens the file, says it is ready and waits for a
// signal, so that the tracers, started in between, see its I/O and no
// exec, open or exit. pagecache traces the worker's pid. cachestat traces
// the whole system, so the guest does nothing else meanwhile: the shell
// waits with its own read, and the tools' output goes to pipes, as a
// write to a file of the guest's tmpfs marks a page accessed. cachestat
// prints a line each second; the I/O comes two seconds after the tracers
// attached, so that what their start did is in earlier lines.
const vmCacheScript = vmShellFuncs + `
# collect FIFO FILE copies what comes through FIFO to FILE once it ends,
# keeping it in the shell's memory meanwhile.
collect() {
	buf=
	while IFS= read -r line; do
		buf="$buf$line
"
	done <$1
	printf '%s' "$buf" >$2
}

# trace NAME CMD... runs CMD, a worker that waits for SIGUSR1, and traces
# its I/O with pagecache -p and with cachestat, as sections
# pagecache-NAME and cachestat-NAME; the worker's output is section
# worker-NAME.
trace() {
	name=$1
	shift
	"$@" >/tmp/worker &
	worker=$!
	exec 3</tmp/worker
	read ready <&3
	for tool in pagecache cachestat; do
		mkfifo /tmp/$tool.fifo
		collect /tmp/$tool.fifo /tmp/$tool.out &
		eval ${tool}_collect=$!
	done
	/gtrace tools pagecache -p $worker >/tmp/pagecache.fifo 2>/tmp/pagecache.err &
	pagecache_pid=$!
	wait_links $pagecache_pid 4 >>/tmp/pagecache.err
	/gtrace tools cachestat -T 1 >/tmp/cachestat.fifo 2>/tmp/cachestat.err &
	cachestat_pid=$!
	wait_links $cachestat_pid 4 >>/tmp/cachestat.err
	read -t 2 nothing <&3
	kill -USR1 $worker
	read result <&3
	read -t 2 nothing <&3
	for tool in cachestat pagecache; do
		eval g=\$${tool}_pid
		kill -INT $g
		wait $g
		status=$?
		eval wait \$${tool}_collect
		emit $tool-$name $status /tmp/$tool.out /tmp/$tool.err
		rm /tmp/$tool.fifo
	done
	kill -USR1 $worker
	wait $worker
	status=$?
	printf '%s\n%s\npid %s\n' "$ready" "$result" $worker >/tmp/worker.out
	emit worker-$name $status /tmp/worker.out /dev/null
	exec 3<&-
}

mkdir /mnt
mke2fs -F -b 4096 /dev/nvme0n1 >/dev/null &&
	mount -t ext4 -o noatime /dev/nvme0n1 /mnt &&
	dd if=/dev/zero of=/mnt/data bs=4096 count=$PAGES 2>/dev/null &&
	sync &&
	echo 3 >/proc/sys/vm/drop_caches || echo "no file system on nvme0n1"
mkfifo /tmp/worker
trace cold /blkio read-on-signal /mnt/data
trace cached /blkio read-on-signal /mnt/data
# A write to a file changes its inode too (its times and i_version, whose
# block is dirtied when the inode is, at least once a tick on 6.12): write
# over the device, the file system unmounted.
umount /mnt
trace write /blkio write-on-signal /dev/nvme0n1 $PAGES
`

// vmCacheRuns are what each workload should show: the worker's output, and
// the pages the tools count. The write dirties whole pages, adding those
// not in the cache without reading them: no miss.
var vmCacheRuns = []struct {
	name, worker          string
	hits, misses, dirtied int
}{
	{"cold", "read", 0, vmCachePages, 0},
	{"cached", "read", vmCachePages, 0, 0},
	{"write", "wrote", 0, 0, vmCachePages},
}

// vmCacheLine is a line of cachestat or pagecache's table: hits, misses,
// dirtied pages and the hit ratio, after cachestat's time (-T) or
// pagecache's PID and COMM.
var vmCacheLine = regexp.MustCompile(`^(\d\d:\d\d:\d\d)? *(?:(\d+) +(\S+) +)?(\d+) +(\d+) +(\d+) +(\d+\.\d\d)%$`)

func TestVMCache(t *testing.T) {
	files := map[string]string{
		"/gtrace": vmtest.BuildGtrace(t),
		"/blkio":  buildTestdata(t, "blkio"),
	}
	env := map[string]string{"PAGES": strconv.Itoa(vmCachePages)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{
				Kernel:  k,
				Files:   files,
				Env:     env,
				NVMe:    true,
				CPUs:    1,
				Timeout: 3 * time.Minute,
			}, vmCacheScript)
			for _, r := range vmCacheRuns {
				t.Run(r.name, func(t *testing.T) {
					worker := sections.get(t, "worker-"+r.name, 0).stdout
					output, workerPid, _ := strings.Cut(worker, "pid ")
					if want := fmt.Sprintf("ready\n%s %d\n", r.worker, 4096*vmCachePages); output != want {
						t.Fatalf("the worker printed %q, want %q", output, want)
					}
					want := vmCacheRow(r.hits, r.misses, r.dirtied)
					t.Run("pagecache", func(t *testing.T) {
						pid, rows := vmCacheRows(t, sections.get(t, "pagecache-"+r.name, 0).stdout, false)
						if len(rows) != 1 || rows[0] != want || strconv.Itoa(pid)+"\n" != workerPid {
							t.Errorf("rows %q of pid %d, want one of the worker, pid %s: %q", rows, pid, strings.TrimSpace(workerPid), want)
						}
					})
					t.Run("cachestat", func(t *testing.T) {
						_, rows := vmCacheRows(t, sections.get(t, "cachestat-"+r.name, 0).stdout, true)
						var busy []string
						for _, row := range rows {
							if row != vmCacheRow(0, 0, 0) {
								busy = append(busy, row)
							}
						}
						// The I/O's line; and the start's, before it.
						if len(busy) == 0 || busy[len(busy)-1] != want {
							t.Errorf("lines with pages %q, want the last to be %q", busy, want)
						}
					})
				})
			}
		})
	}
}

// vmCacheRow is a row as vmCacheRows returns it.
func vmCacheRow(hits, misses, dirtied int) string {
	ratio := "0.00"
	if hits+misses > 0 {
		r := (hits*10000 + (hits+misses)/2) / (hits + misses)
		ratio = fmt.Sprintf("%d.%02d", r/100, r%100)
	}
	return fmt.Sprintf("hits %d misses %d dirtied %d ratio %s%%", hits, misses, dirtied, ratio)
}

// vmCacheRows reads the output of cachestat or pagecache: its header,
// then its rows, each formatted as vmCacheRow does (pagecache's for the
// process blkio, whose pid it returns), each with a time if timed.
func vmCacheRows(t *testing.T, out string, timed bool) (pid int, rows []string) {
	t.Helper()
	if !strings.Contains(out, "    HITS   MISSES  DIRTIES HITRATIO\n") {
		t.Errorf("no header line")
	}
	for _, line := range strings.Split(out, "\n") {
		m := vmCacheLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if timed != (m[1] != "") {
			t.Errorf("%q: want a time: %v", line, timed)
		}
		if m[2] != "" {
			if m[3] != "blkio" {
				t.Errorf("%q: a row of %s, not of blkio", line, m[3])
			}
			pid, _ = strconv.Atoi(m[2])
		}
		hits, _ := strconv.Atoi(m[4])
		misses, _ := strconv.Atoi(m[5])
		dirtied, _ := strconv.Atoi(m[6])
		row := vmCacheRow(hits, misses, dirtied)
		if !strings.HasSuffix(row, " ratio "+m[7]+"%") {
			t.Errorf("%q: the hit ratio of %s", line, row)
		}
		rows = append(rows, row)
	}
	return pid, rows
}

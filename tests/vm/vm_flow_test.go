package vm

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/internal/vmtest"
)

// vmFlowScript follows dd's read of a 64 KiB file of ext2 on the NVMe
// namespace, with the caches dropped (cold), then again (warm), each
// with gtrace flow on the functions of the page cache and readahead, and
// prints each run's flow as it came, saved with -o, and shown from the
// saved file the other way: the cold run's lines and graph, the warm
// run's graph and lines. The block device itself would not do: its page
// cache goes when the last file open on it is closed, so every dd of it
// is cold.
const vmFlowScript = vmShellFuncs + `
mkdir /mnt
mke2fs -F -b 4096 /dev/nvme0n1 >/dev/null &&
	mount -t ext4 -o noatime /dev/nvme0n1 /mnt &&
	dd if=/dev/zero of=/mnt/data bs=64k count=1 2>/dev/null &&
	sync || echo "no file system on nvme0n1"
FUNCS='vfs_read,filemap_*,page_cache_*,read_pages,*readahead*,folio_alloc*,__folio_alloc*'
DD="dd if=/mnt/data of=/dev/null bs=64k count=1"
echo 3 >/proc/sys/vm/drop_caches
section cold /gtrace flow --syscall read -o /tmp/cold.json -c "$DD" $FUNCS
section warm-graph /gtrace flow --graph --syscall read -o /tmp/warm.json -c "$DD" $FUNCS
section cold-graph /gtrace flow --graph --from /tmp/cold.json
section warm /gtrace flow --from /tmp/warm.json
`

// vmFlowMiss are the calls of a page-cache miss: readahead, and the
// allocation of the folios it reads into (filemap_alloc_folio on 6.1,
// filemap_alloc_folio_noprof on 6.12).
var vmFlowMiss = []string{"page_cache_sync_ra", "page_cache_ra_unbounded", "read_pages", "filemap_alloc_folio"}

// vmFlowLine is a line of gtrace flow: CPU, thread, the time a return
// took, the indent and arrow, the function.
var vmFlowLine = regexp.MustCompile(`^[ \d]{3} [ \d]{7} ( {12}| *\d+\.\d{3} [um]?s| {11}-)  ( *)(=>|<=|->|<-) (\S+)$`)

// vmGraphLine is a line of gtrace flow --graph: total time, the tree,
// the count and the function.
var vmGraphLine = regexp.MustCompile(`^ *\d+\.\d{3} [um]?s : [ |+-]*\((\d+)\) (\S+)$`)

func TestVMFlow(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			// One CPU: under TCG, a kernel with two now and then
			// oopses on an int3 as it patches its own code, which
			// attaching the syscall tracepoints makes it do.
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, NVMe: true, CPUs: 1,
				Timeout: 3 * time.Minute}, vmFlowScript)
			for _, run := range []struct {
				name string
				miss bool
			}{{"cold", true}, {"warm", false}} {
				t.Run(run.name, func(t *testing.T) {
					calls := vmFlowCalls(t, sections.get(t, run.name, 0).stdout)
					graph := vmFlowGraph(t, sections.get(t, run.name+"-graph", 0).stdout)
					if calls["read"] != 1 || graph["read"] != 1 {
						t.Errorf("%d and %d reads in the flow and graph, want dd's one", calls["read"], graph["read"])
					}
					if calls["filemap_read"] == 0 || graph["filemap_read"] == 0 {
						t.Errorf("no filemap_read in the read")
					}
					for _, fn := range vmFlowMiss {
						if (calls[fn] > 0) != run.miss || (graph[fn] > 0) != run.miss {
							t.Errorf("%s called %d times in the flow and %d in the graph; want calls: %v", fn, calls[fn], graph[fn], run.miss)
						}
					}
				})
			}
			if stderr := sections["cold"].stderr; !strings.Contains(stderr, "probes (kprobe) in") {
				t.Errorf("the cold run did not say it attached kprobes: %q", stderr)
			}
		})
	}
}

// vmFlowCalls checks that the lines of a flow nest, each return that of
// the innermost call entered and at its depth, and counts the calls of
// each function. Functions are counted by name without the suffix
// _noprof of 6.12's allocation functions.
func vmFlowCalls(t *testing.T, out string) map[string]int {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "CPU     TID     DURATION  FUNCTION") {
		t.Fatalf("no flow in %q", out)
	}
	calls := map[string]int{}
	var open []string
	for _, line := range lines[1:] {
		m := vmFlowLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q is not a call's entry or return", line)
		}
		took, depth, arrow, fn := strings.TrimSpace(m[1]), len(m[2])/2, m[3], m[4]
		entry := arrow == "=>" || arrow == "->"
		if (arrow == "=>" || arrow == "<=") != (depth == 0) || (took == "") != entry {
			t.Fatalf("line %q: depth %d, time %q", line, depth, took)
		}
		if entry {
			if depth != len(open) {
				t.Fatalf("line %q at depth %d, want %d", line, depth, len(open))
			}
			open = append(open, fn)
			calls[strings.TrimSuffix(fn, "_noprof")]++
			continue
		}
		if len(open) == 0 || open[len(open)-1] != fn || depth != len(open)-1 {
			t.Fatalf("line %q returns from %s at depth %d, inside %q", line, fn, depth, open)
		}
		open = open[:len(open)-1]
	}
	if len(open) > 0 {
		t.Errorf("calls %q never returned", open)
	}
	return calls
}

// vmFlowGraph reads a call graph, returning the count of each function
// over its paths, named as vmFlowCalls names them.
func vmFlowGraph(t *testing.T, out string) map[string]int {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 || lines[0] != "# TOTAL TIME   FUNCTION" {
		t.Fatalf("no graph in %q", out)
	}
	counts := map[string]int{}
	for _, line := range lines[1:] {
		if strings.TrimLeft(line, " :|") == "" {
			continue
		}
		m := vmGraphLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q is not a node of the graph", line)
		}
		n, _ := strconv.Atoi(m[1])
		counts[strings.TrimSuffix(m[2], "_noprof")] += n
	}
	return counts
}

// vmFlowAttachScript times gtrace flow on one function, then on about a
// thousand (those of ext4, the VFS and the LSM hooks), following a -c
// child that sleeps 0.1 s, as vmAttachScript times plain wildcards: the
// difference is what the functions cost, the rest gtrace's start.
const vmFlowAttachScript = `
aff=/sys/kernel/tracing/available_filter_functions
printf '#!/bin/sh\nsleep 0.1\ncut -d" " -f1 /proc/uptime >/tmp/end\n' >/tmp/child
chmod +x /tmp/child
now() { cut -d' ' -f1 /proc/uptime; }
ulimit -n 100000
echo "@@ functions $(grep -e '^ext4_' -e '^vfs_' -e '^security_' $aff | cut -d' ' -f1 | sort -u | wc -l)"

# bench NAME GLOB runs gtrace flow on GLOB and prints one line of figures.
bench() {
	start=$(now)
	/gtrace flow -c /tmp/child "$2" >/tmp/out 2>/tmp/err
	status=$?
	exit=$(now)
	echo "@@ $1 status=$status start=$start end=$(cat /tmp/end) exit=$exit lines=$(wc -l </tmp/out)" \
		"$(grep -h '^Attached' /tmp/err)"
	[ $status = 0 ] || tail -3 /tmp/err | sed 's/^/@@ error: /'
}
bench one vfs_read
bench thousand 'ext4_*,vfs_*,security_*'
`

// TestVMFlowAttachTimes measures how long gtrace flow takes to attach to
// about a thousand functions, and to detach, under Debian's 6.12 kernel
// (kprobe.multi) and 6.1 (a kprobe per function), for
// docs/performance.md. Like TestVMAttachTimes, it is a measurement that
// runs only with GTRACE_VM_BENCH=1:
//
//	GTRACE_VM_BENCH=1 go test ./tests/vm -run TestVMFlowAttachTimes -v -timeout 30m
func TestVMFlowAttachTimes(t *testing.T) {
	testutils.OptIn(t, "GTRACE_VM_BENCH", "a measurement")
	gtrace := vmtest.BuildGtrace(t)
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			res := vmtest.Run(t, vmtest.Config{
				Kernel:  k,
				Files:   map[string]string{"/gtrace": gtrace},
				Timeout: 15 * time.Minute,
			}, "sh", "-c", vmFlowAttachScript)
			if res.ExitCode != 0 {
				t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			t.Logf("kernel %s, boot to power off %v", k.Name, res.Boot.Round(time.Second))
			for _, line := range strings.Split(res.Stdout, "\n") {
				if strings.HasPrefix(line, "@@ ") {
					t.Log(benchFigures(line))
				}
			}
		})
	}
}

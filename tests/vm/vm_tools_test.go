package vm

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// The tests here run Debian's bpftrace 0.17 kprobe tools, unmodified, from
// the host's /usr/sbin, and the kernel-side scripts of Benchmark 1 of
// "Performance analysis of DTrace on FreeBSD & eBPF on Linux" (BSDCan
// 2023), under the 6.1 and 6.12 kernels. As in vm_test.go, each kernel
// boots once: vmToolsScript runs every command and prints its result as a
// section. vfscount, vfsstat and bitesize are tested there.
//
// The workloads are busybox commands and tests/testdata/vmwork, built
// here, for TCP over loopback, a Unix socket and memory to fill. Their
// numbers are the constants below.
//
// Where a kernel does not let a tool's kprobe attach, gtrace must fail
// naming the function: biolatency, biosnoop and biostacks probe
// blk_account_io_start, which 6.1 lacks and 6.12 does not list among its
// traceable functions; swapin probes swap_readpage, which 6.12 replaced
// with swap_read_folio.

// vmToolsBench are the Benchmark 1 scripts that trace the kernel, by
// number: a kprobe and a kretprobe on vfs_read, a filter, a map, keys,
// kernel stacks, a histogram, timing, both stacks and printf.
var vmToolsBench = map[string]string{
	"02": "k:vfs_read {\n    1\n}\n",
	"03": "kr:vfs_read {\n    1\n}\n",
	"08": "k:vfs_read /arg2 > 0/ {\n    1\n}\n",
	"09": "k:vfs_read {\n    @ = count()\n}\n",
	"10": "k:vfs_read {\n    @[pid] = count()\n}\n",
	"11": "k:vfs_read {\n    @[comm] = count()\n}\n",
	"12": "k:vfs_read {\n    @[pid, comm] = count()\n}\n",
	"13": "k:vfs_read {\n    @[kstack] = count()\n}\n",
	"15": "k:vfs_read {\n    @ = hist(arg2)\n}\n",
	"16": "k:vfs_read {\n    @s[tid] = nsecs\n}\n\nkr:vfs_read /@s[tid]/ {\n    @ = hist(nsecs - @s[tid]);\n    delete(@s[tid]);\n}\n",
	"17": "k:vfs_read {\n    @[kstack, ustack] = hist(arg2)\n}\n",
	"18": "k:vfs_read {\n    printf(\"%d bytes\\n\", arg2)\n}\n",
}

// vmBenchReads is how many reads of one byte the benchmark's dd makes.
const vmBenchReads = 2000

// The workloads' numbers.
const (
	vmTCPBytes    = 10240                 // sent by vmwork tcp
	vmUndumpMsg   = "gtrace-undump-hello" // sent by vmwork unix
	vmOOMLimitMB  = 32                    // memory.max of the OOM cgroup
	vmSwapLimitMB = 16                    // memory.max of the swap cgroup
)

// vmToolsList are the tools of /usr/sbin that the guest runs.
var vmToolsList = []string{"biolatency", "biosnoop", "biostacks", "dcsnoop", "capable",
	"tcpconnect", "tcplife", "tcpretrans", "oomkill", "undump", "loads", "swapin"}

// vmToolsScript is the guest's shell script.
const vmToolsScript = `
BLK="dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=8 iflag=direct"
aff=/sys/kernel/tracing/available_filter_functions
` + vmShellFuncs + `
# traced TOOL CMD... runs /bt/TOOL.bt with -c CMD as section TOOL, and
# prints what CMD wrote as section TOOL-work, so that it does not come
# between the parts of the tool's lines.
traced() {
	tool=$1
	shift
	echo "exec $* >/tmp/work.out" >/tmp/work
	section $tool /gtrace /bt/$tool.bt -c "sh /tmp/work"
	section $tool-work cat /tmp/work.out
}

# Benchmark 1: dd reads /dev/zero one byte at a time.
for b in $BENCH; do
	section bench-$b /gtrace /bench/$b.bt -c "dd if=/dev/zero of=/dev/null bs=1 count=$READS"
done

# Block I/O.
section syms-blk sh -c "grep -e ' blk_account_io_start$' -e ' __blk_account_io_start$' -e ' blk_account_io_done$' -e ' __blk_account_io_done$' /proc/kallsyms | cut -d' ' -f3 | sort"
section funcs-blk sh -c "grep -e '^blk_account_io_' -e '^__blk_account_io_' $aff | sort -u"
for tool in biolatency biosnoop biostacks; do
	section $tool /gtrace /bt/$tool.bt -c "$BLK"
done

# Dentry lookups by cat.
mkdir /tmp/gtrace-dcdir
echo data >/tmp/gtrace-dcdir/gtrace-dcfile
section funcs-lookup sh -c "grep -e '^lookup_fast' -e '^d_lookup\b' $aff | sort -u"
# cat's output goes elsewhere: busybox cat writes with sendfile, which
# does not take the lock of the file position that it shares with the
# tool, and can overwrite the tool's lines.
echo 'cat /tmp/gtrace-dcdir/gtrace-dcfile >/dev/null' >/tmp/dc
section dcsnoop /gtrace /bt/dcsnoop.bt -c "sh /tmp/dc"

# chown to another user: a CAP_CHOWN check.
touch /tmp/gtrace-capfile
section capable /gtrace /bt/capable.bt -c "chown 1 /tmp/gtrace-capfile"

# TCP over loopback.
ip link set lo up
traced tcpconnect /vmwork tcp 5001 $TCPBYTES
traced tcplife /vmwork tcp 5002 $TCPBYTES
traced tcpretrans /vmwork retrans 5003

# A Unix stream socket.
traced undump /vmwork unix $UNDUMP

# Load averages, read before and after.
section loadavg-before cat /proc/loadavg
section loads /gtrace /bt/loads.bt -c "sleep 2.5"
section loadavg-after cat /proc/loadavg

# An OOM kill in a memory cgroup, without swap.
mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir /sys/fs/cgroup/oom
echo ${OOMMB}M >/sys/fs/cgroup/oom/memory.max
printf 'echo $$ >/sys/fs/cgroup/oom/cgroup.procs\necho $$ >/tmp/oom.pid\nexec /vmwork alloc %d 1\n' $((4 * OOMMB)) >/tmp/oom
section oomkill /gtrace /bt/oomkill.bt -c "sh /tmp/oom"
section oom-pid cat /tmp/oom.pid

# Swap on nvme0n1, filled by a cgroup that writes three times its limit.
section swapon sh -c "mkswap /dev/nvme0n1 >/dev/null && swapon /dev/nvme0n1 && cat /proc/swaps"
mkdir /sys/fs/cgroup/swap
echo ${SWAPMB}M >/sys/fs/cgroup/swap/memory.max
printf 'echo $$ >/sys/fs/cgroup/swap/cgroup.procs\nexec /vmwork alloc %d 2\n' $((3 * SWAPMB)) >/tmp/swap
section funcs-swap sh -c "grep -e '^swap_readpage' -e '^swap_read_folio' $aff | sort -u"
# swapin.bt prints its map and clears it every second, and a page read
# between the two is not counted: a second gtrace counts every page.
if grep -qx swap_readpage $aff; then
	/gtrace -e 'kprobe:swap_readpage { @pages = count(); }' >/tmp/ref.out 2>/tmp/ref.err &
	ref=$!
	wait_links $ref 1 >>/tmp/ref.err
fi
section vmstat-before grep pswpin /proc/vmstat
section swapin /gtrace /bt/swapin.bt -c "sh /tmp/swap"
section vmstat-after grep pswpin /proc/vmstat
if [ -n "$ref" ]; then
	kill -INT $ref
	wait $ref
	emit swapin-all $? /tmp/ref.out /tmp/ref.err
fi
`

func TestVMTools(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"/gtrace": vmtest.BuildGtrace(t),
		"/vmwork": buildTestdata(t, "vmwork"),
	}
	for _, tool := range vmToolsList {
		files["/bt/"+tool+".bt"] = "/usr/sbin/" + tool + ".bt"
	}
	var bench []string
	for n, text := range vmToolsBench {
		path := filepath.Join(dir, n+".bt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files["/bench/"+n+".bt"] = path
		bench = append(bench, n)
	}
	slices.Sort(bench)
	env := map[string]string{
		"BENCH":    strings.Join(bench, " "),
		"READS":    strconv.Itoa(vmBenchReads),
		"TCPBYTES": strconv.Itoa(vmTCPBytes),
		"UNDUMP":   vmUndumpMsg,
		"OOMMB":    strconv.Itoa(vmOOMLimitMB),
		"SWAPMB":   strconv.Itoa(vmSwapLimitMB),
	}

	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			start := time.Now()
			res := vmtest.Run(t, vmtest.Config{
				Kernel:  k,
				Files:   files,
				Env:     env,
				NVMe:    true,
				Timeout: 8 * time.Minute,
			}, "sh", "-c", vmToolsScript)
			t.Logf("the guest ran for %.1fs", time.Since(start).Seconds())
			if res.ExitCode != 0 {
				t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			sections, err := parseVMSections(res.Stdout)
			if err != nil {
				t.Fatalf("%v\nguest stdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
			}
			checkVMTools(t, k.Name, sections)
		})
	}
}

// vmMissing is gtrace's error for a kprobe on a function that the kernel
// does not let it trace, located at the attach point, then the cause:
// the function, named again with why. Warnings that it will not attach
// come first.
const vmMissing = `(?m)^/bt/\w+\.bt:\d+:\d+-\d+: ERROR: Unable to attach probe: kprobe:%s\. .*\n.*\n.*\nERROR: %[1]s `

// checkVMTools checks the sections of vmToolsScript under kernel kname.
func checkVMTools(t *testing.T, kname string, sections vmSections) {
	section := sections.get
	// fails checks that a tool failed on a probe of fn, naming it.
	fails := func(t *testing.T, tool, fn string) {
		t.Helper()
		s := section(t, tool, 1)
		if want := fmt.Sprintf(vmMissing, fn); !regexp.MustCompile(want).MatchString(s.stderr) {
			t.Errorf("%s: want the error %q", tool, want)
		}
	}

	t.Run("bench", func(t *testing.T) { checkVMBench(t, section) })

	t.Run("bio", func(t *testing.T) {
		// Neither kernel lets a kprobe attach to blk_account_io_start
		// or __blk_account_io_start: 6.1 has neither symbol, 6.12 has
		// the first, but not among its traceable functions.
		syms := map[string]string{"6.1": "blk_account_io_done\n", "6.12": "blk_account_io_done\nblk_account_io_start\n"}[kname]
		if got := section(t, "syms-blk", 0).stdout; got != syms {
			t.Errorf("blk_account_io_* symbols: got %q, want %q", got, syms)
		}
		for _, fn := range vmLines(section(t, "funcs-blk", 0).stdout) {
			if strings.HasSuffix(fn, "_io_start") || strings.HasSuffix(fn, "_io_done") {
				t.Errorf("%s is traceable", fn)
			}
		}
		for _, tool := range []string{"biolatency", "biosnoop", "biostacks"} {
			fails(t, tool, "blk_account_io_start")
		}
	})

	t.Run("dcsnoop", func(t *testing.T) {
		s := section(t, "dcsnoop", 0)
		// lookup_fast sees what is left of the path at each step.
		var got []string
		line := regexp.MustCompile(`^\d+ +\d+ +cat +R (.*)$`)
		for _, l := range vmLines(s.stdout) {
			if m := line.FindStringSubmatch(l); m != nil && strings.Contains(m[1], "gtrace-dc") {
				got = append(got, m[1])
			}
		}
		want := []string{"tmp/gtrace-dcdir/gtrace-dcfile", "gtrace-dcdir/gtrace-dcfile", "gtrace-dcfile"}
		if !slices.Equal(got, want) {
			t.Errorf("cat's lookups: got %q, want %q", got, want)
		}
	})

	t.Run("capable", func(t *testing.T) {
		s := section(t, "capable", 0)
		var got []string
		for _, l := range vmLines(s.stdout) {
			if f := strings.Fields(l); len(f) == 7 && f[3] == "chown" {
				got = append(got, strings.Join(f[3:], " "))
			}
		}
		// One check: chown to another user needs CAP_CHOWN.
		if want := []string{"chown 0 CAP_CHOWN 0"}; !slices.Equal(got, want) {
			t.Errorf("chown's capability checks: got %q, want %q", got, want)
		}
	})

	t.Run("tcpconnect", func(t *testing.T) {
		s := section(t, "tcpconnect", 0)
		port := vmClientPort(t, section(t, "tcpconnect-work", 0).stdout)
		want := fmt.Sprintf(`^\d\d:\d\d:\d\d \d+ +vmwork +127\.0\.0\.1 +%d +127\.0\.0\.1 +5001 *$`, port)
		if n := vmCountLines(s.stdout, `^\d\d:\d\d:\d\d `); n != 1 || vmCountLines(s.stdout, want) != 1 {
			t.Errorf("want one connection, matching %q", want)
		}
	})

	t.Run("tcplife", func(t *testing.T) {
		s := section(t, "tcplife", 0)
		port := vmClientPort(t, section(t, "tcplife-work", 0).stdout)
		kb := vmTCPBytes / 1024
		// The client's socket and the server's, both closed in vmwork.
		for _, want := range []string{
			fmt.Sprintf(`^\d+ +vmwork +127\.0\.0\.1 +%d +127\.0\.0\.1 +5002 +%d +0 +\d+$`, port, kb),
			fmt.Sprintf(`^\d+ +vmwork +127\.0\.0\.1 +5002 +127\.0\.0\.1 +%d +0 +%d +\d+$`, port, kb),
		} {
			if vmCountLines(s.stdout, want) != 1 {
				t.Errorf("no line matching %q", want)
			}
		}
		if n := vmCountLines(s.stdout, `^\d+ +\S+ +127\.0\.0\.1 `); n != 2 {
			t.Errorf("%d connections, want 2", n)
		}
	})

	t.Run("tcpretrans", func(t *testing.T) {
		s := section(t, "tcpretrans", 0)
		work := section(t, "tcpretrans-work", 0).stdout
		if vmCountLines(work, `^retrans first port \d+, second: timed out: true$`) != 1 {
			t.Fatal("the second connection did not time out")
		}
		// The SYN of the second connection, retransmitted once from
		// the timer, in no process.
		want := `^\d\d:\d\d:\d\d 0 +127\.0\.0\.1:\d+ +127\.0\.0\.1:5003 +SYN_SENT$`
		if n := vmCountLines(s.stdout, `^\d\d:\d\d:\d\d `); n != 1 || vmCountLines(s.stdout, want) != 1 {
			t.Errorf("want one retransmission, matching %q", want)
		}
	})

	t.Run("undump", func(t *testing.T) {
		s := section(t, "undump", 0)
		if work := section(t, "undump-work", 0).stdout; work != fmt.Sprintf("unix read %q\n", vmUndumpMsg) {
			t.Fatalf("vmwork unix printed %q", work)
		}
		want := fmt.Sprintf(`^\d\d:\d\d:\d\d vmwork +\d+ +%d +%s$`, len(vmUndumpMsg), vmUndumpMsg)
		if n := vmCountLines(s.stdout, `^\d\d:\d\d:\d\d `); n != 1 || vmCountLines(s.stdout, want) != 1 {
			t.Errorf("want one message, matching %q", want)
		}
	})

	t.Run("loads", func(t *testing.T) {
		s := section(t, "loads", 0)
		var snapshots [][]float64
		for _, name := range []string{"loadavg-before", "loadavg-after"} {
			f := strings.Fields(section(t, name, 0).stdout)
			snapshots = append(snapshots, vmFloats(t, f[:3]))
		}
		line := regexp.MustCompile(`^\d\d:\d\d:\d\d load averages: (\d+\.\d{3}) (\d+\.\d{3}) (\d+\.\d{3})$`)
		n := 0
		for _, l := range vmLines(s.stdout) {
			m := line.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			n++
			// /proc/loadavg rounds avenrun to two decimals; the
			// tool truncates it to three.
			got := vmFloats(t, m[1:])
			if !slices.ContainsFunc(snapshots, func(s []float64) bool {
				for i := range s {
					if got[i] < s[i]-0.0051 || got[i] > s[i]+0.005 {
						return false
					}
				}
				return true
			}) {
				t.Errorf("%q: not the load averages of /proc/loadavg, %v", l, snapshots)
			}
		}
		if n < 2 {
			t.Errorf("%d lines of load averages in 2.5 s, want 2", n)
		}
	})

	t.Run("oomkill", func(t *testing.T) {
		s := section(t, "oomkill", 0)
		pid := strings.TrimSpace(section(t, "oom-pid", 0).stdout)
		pages := vmOOMLimitMB << 20 / 4096
		want := fmt.Sprintf(`^\d\d:\d\d:\d\d Triggered by PID %s \("vmwork"\), OOM kill of PID %s \("vmwork"\), %d pages, loadavg: [\d.]+ [\d.]+ [\d.]+ \d+/\d+ \d+$`, pid, pid, pages)
		if n := vmCountLines(s.stdout, `Triggered by`); n != 1 || vmCountLines(s.stdout, want) != 1 {
			t.Errorf("want one OOM kill, matching %q", want)
		}
	})

	t.Run("swapin", func(t *testing.T) {
		section(t, "swapon", 0)
		funcs := vmLines(section(t, "funcs-swap", 0).stdout)
		if kname == "6.12" {
			// 6.12 reads swap with swap_read_folio.
			if slices.Contains(funcs, "swap_readpage") {
				t.Fatalf("swap_readpage is traceable: %q", funcs)
			}
			fails(t, "swapin", "swap_readpage")
			return
		}
		s := section(t, "swapin", 0)
		pswpin := func(name string) int {
			_, n, _ := strings.Cut(strings.TrimSpace(section(t, name, 0).stdout), " ")
			v, _ := strconv.Atoi(n)
			return v
		}
		want := pswpin("vmstat-after") - pswpin("vmstat-before")
		got := 0
		entry := regexp.MustCompile(`^@\[(\w+), \d+\]: (\d+)$`)
		for _, l := range vmLines(s.stdout) {
			if m := entry.FindStringSubmatch(l); m != nil {
				if m[1] != "vmwork" {
					t.Errorf("%q: a swap-in by another process than vmwork", l)
				}
				n, _ := strconv.Atoi(m[2])
				got += n
			}
		}
		// Each swap_readpage reads a page, which pswpin counts. A
		// gtrace that never clears its count sees them all;
		// swapin.bt misses those read between printing its map and
		// clearing it, every second.
		all := section(t, "swapin-all", 0).stdout
		if want <= 0 || !slices.Contains(vmLines(all), fmt.Sprintf("@pages: %d", want)) {
			t.Errorf("/proc/vmstat's pswpin grew by %d, not counted by kprobe:swap_readpage", want)
		}
		if got <= 0 || got > want {
			t.Errorf("swapin.bt counted %d swap-ins, want at most the %d pages read", got, want)
		}
		t.Logf("swapin.bt counted %d of %d swap-ins", got, want)
	})
}

// checkVMBench checks the Benchmark 1 scripts. Each ran dd with -c, whose
// child makes no system call between its release and the execve of dd:
// the reads are dd's vmBenchReads.
func checkVMBench(t *testing.T, section func(*testing.T, string, int) vmSection) {
	n := vmBenchReads
	// only checks that one probe attached and stdout holds just want.
	only := func(t *testing.T, s vmSection, want ...string) {
		t.Helper()
		if got := vmLines(s.stdout); !slices.Equal(got, want) || vmAttaching(s.stderr) != 1 {
			t.Errorf("got %q, want %q; stderr:\n%s", got, want, s.stderr)
		}
	}
	t.Run("02", func(t *testing.T) { only(t, section(t, "bench-02", 0)) })
	t.Run("03", func(t *testing.T) { only(t, section(t, "bench-03", 0)) })
	t.Run("08", func(t *testing.T) { only(t, section(t, "bench-08", 0)) })
	t.Run("09", func(t *testing.T) {
		only(t, section(t, "bench-09", 0), fmt.Sprintf("@: %d", n))
	})
	t.Run("10", func(t *testing.T) {
		out := section(t, "bench-10", 0).stdout
		if vmCountLines(out, fmt.Sprintf(`^@\[\d+\]: %d$`, n)) != 1 || len(vmLines(out)) != 1 {
			t.Errorf("want one pid with %d reads", n)
		}
	})
	t.Run("11", func(t *testing.T) {
		out := section(t, "bench-11", 0).stdout
		if got, want := vmCounts(out), map[string]int{"dd": n}; !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("12", func(t *testing.T) {
		lines := vmLines(section(t, "bench-12", 0).stdout)
		if len(lines) != 1 || !regexp.MustCompile(fmt.Sprintf(`^@\[\d+, dd\]: %d$`, n)).MatchString(lines[0]) {
			t.Errorf("got %q, want @[P, dd]: %d only", lines, n)
		}
	})
	t.Run("13", func(t *testing.T) {
		out := section(t, "bench-13", 0).stdout
		total := 0
		for _, e := range vmStackEntry.FindAllStringSubmatch(out, -1) {
			frames := strings.Fields(e[1])
			if len(frames) < 3 || !strings.HasPrefix(frames[0], "vfs_read+") || !strings.HasPrefix(frames[1], "ksys_read+") ||
				!strings.HasPrefix(frames[len(frames)-1], "entry_SYSCALL_64") {
				t.Errorf("frames %q: want vfs_read, ksys_read, ..., entry_SYSCALL_64*", frames)
			}
			c, _ := strconv.Atoi(e[2])
			total += c
		}
		if total != n {
			t.Errorf("the stacks count %d reads, want %d", total, n)
		}
	})
	t.Run("15", func(t *testing.T) {
		out := section(t, "bench-15", 0).stdout
		if got, want := vmHist(out, "@:"), map[string]int{"[1]": n}; !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("16", func(t *testing.T) {
		total := 0
		for _, c := range vmHist(section(t, "bench-16", 0).stdout, "@:") {
			total += c
		}
		if total != n {
			t.Errorf("%d latencies, want %d", total, n)
		}
	})
	t.Run("17", func(t *testing.T) {
		// gtrace's own reads are counted too: of the maps of the
		// processes whose user stacks it resolves, and the Go
		// runtime's own, such as its scheduler's wake-up eventfd.
		out := section(t, "bench-17", 0).stdout
		ones := 0
		for _, entry := range strings.Split(out, "\n@[")[1:] {
			stacks, hist, _ := strings.Cut(entry, "]:\n")
			rows := vmHist("@:\n"+hist, "@:")
			if !strings.HasPrefix(strings.TrimSpace(stacks), "vfs_read+") {
				t.Errorf("kernel stack %q: want vfs_read first", stacks)
			}
			if strings.Contains(stacks, "gtrace/symbol.readMaps") || strings.Contains(stacks, "runtime.read.abi0") {
				continue
			}
			if len(rows) != 1 || rows["[1]"] == 0 {
				t.Errorf("stacks %q: want reads of one byte, got %v", stacks, rows)
			}
			ones += rows["[1]"]
		}
		if ones != n {
			t.Errorf("%d reads of one byte, want %d", ones, n)
		}
	})
	t.Run("18", func(t *testing.T) {
		lines := vmLines(section(t, "bench-18", 0).stdout)
		if len(lines) != n || vmCountLines(strings.Join(lines, "\n"), `^1 bytes$`) != n {
			t.Errorf("%d lines, want %d of %q", len(lines), n, "1 bytes")
		}
	})
}

// vmClientPort returns the client port that vmwork tcp printed.
func vmClientPort(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^tcp client port (\d+) sent (\d+)$`).FindStringSubmatch(out)
	if m == nil || m[2] != strconv.Itoa(vmTCPBytes) {
		t.Fatal("vmwork tcp did not send its bytes")
	}
	port, _ := strconv.Atoi(m[1])
	return port
}

// vmCountLines returns how many lines of out match the expression re.
func vmCountLines(out, re string) int {
	r := regexp.MustCompile(re)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if r.MatchString(l) {
			n++
		}
	}
	return n
}

// vmFloats parses numbers, failing t on any other string.
func vmFloats(t *testing.T, s []string) []float64 {
	t.Helper()
	var f []float64
	for _, x := range s {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			t.Fatal(err)
		}
		f = append(f, v)
	}
	return f
}

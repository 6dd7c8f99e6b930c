package vm

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
	"gtrace/tests/internal/harness"
)

// The tests here run gtrace under Debian's 6.1 and 6.12 kernels in qemu,
// for what the host kernel lacks: kprobes, fentry and a block device.
// Booting is slow, so each kernel boots once: vmGuestScript runs every
// gtrace command in the guest and prints each result as a section, and
// the subtests check the sections. gtrace attaches each kprobe on its own
// (no kprobe.multi), so everything runs on both kernels.
//
// The workloads are busybox commands whose reads are known:
//
//   - $DD is dd reading the 10000-byte file gtrace-vm-data in blocks of
//     4096: vfs_read is called 4 times with count 4096 and returns 4096,
//     4096, 1808 and 0; dd writes 3 times.
//   - $BLK is dd reading the guest's NVMe namespace with O_DIRECT: 8
//     requests of 4096 bytes at sectors 0, 8, ..., 56.
//
// Probes filter on comm == "dd" where the guest's other reads would
// count too.

// vmFirstInsn is, for each kernel, the offset in vfs_read of the first
// instruction after the 5-byte call to __fentry__ (objdump of Debian's
// images: 6.1 starts with the call, 6.12 with endbr64 before it). Offset 2
// is inside the first instruction on both.
var vmFirstInsn = map[string]int{"6.1": 5, "6.12": 9}

// vmKillLinks is how many links the SIGKILL script holds once attached:
// kprobe, kretprobe and the wildcard's three functions, which 6.12
// attaches as one multi-kprobe (an fprobe, which the kprobe list does not
// show) and 6.1, without kprobe.multi, as three kprobes.
var vmKillLinks = map[string]int{"6.1": 5, "6.12": 3}

// vmGuestScript is the guest's shell script. $OFF is the kernel's
// vmFirstInsn. Tools from the host's /usr/sbin are in /bt.
const vmGuestScript = `
data=/tmp/gtrace-vm-data
dd if=/dev/zero of=$data bs=1000 count=10 2>/dev/null
DD="dd if=$data of=/dev/null bs=4096"
BLK="dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=8 iflag=direct"
aff=/sys/kernel/tracing/available_filter_functions
kprobes=/sys/kernel/debug/kprobes/list

` + vmShellFuncs + `
section kprobe /gtrace -e '
kprobe:vfs_read /pid == cpid && comm == "dd"/ {
	@reads = count(); @size = hist(arg2); @func[func] = count(); @probe[probe] = count();
}
kretprobe:vfs_read /pid == cpid && comm == "dd"/ {
	@ret = hist(retval); @bytes = sum(retval); @rfunc[func, probe] = count();
}' -c "$DD"

section offset /gtrace -e "
kprobe:vfs_read+0 /comm == \"dd\"/ { @[probe, func] = count(); }
kprobe:vfs_read+$OFF /comm == \"dd\"/ { @[probe, func] = count(); @top[kstack(1)] = count(); }" -c "$DD"

section bad-offset /gtrace -e 'kprobe:vfs_read+2 { exit(); }'
section no-function /gtrace -e 'kprobe:gtrace_vm_no_such_function { exit(); }'

section wildcard /gtrace -e 'kprobe:vfs_rea* /comm == "dd"/ { @[probe, func] = count(); }' -c "$DD"
section funcs-vfs_rea sh -c "grep '^vfs_rea' $aff | sort -u"

section fentry /gtrace -e '
fentry:vfs_read /comm == "dd"/ {
	@name[str(args.file->f_path.dentry->d_name.name)] = count(); @count = hist(args.count);
	@f[func, probe] = count();
}
fexit:vfs_read /comm == "dd"/ {
	@ret = hist(retval); @bytes = sum(retval); @x[str(args->file->f_path.dentry->d_name.name), args->count] = count();
}' -c "$DD"

section struct /gtrace -e '
kprobe:vfs_read /comm == "dd"/ {
	@[str(((struct file *)arg0)->f_path.dentry->d_name.name), curtask->comm, ((struct file *)arg0)->f_inode->i_size] = count();
	@tgid[curtask->tgid - pid] = count();
}' -c "$DD"

section kstack /gtrace -e 'kprobe:vfs_read /comm == "dd"/ { @[kstack] = count(); }' -c "$DD"

section block /gtrace -e '
kprobe:blk_mq_start_request /comm == "dd"/ {
	$rq = (struct request *)arg0;
	@io[$rq->q->disk->disk_name, $rq->__data_len, $rq->__sector] = count();
}' -c "$BLK"

section vfscount.bt /gtrace /bt/vfscount.bt -c "$DD"
section funcs-vfs_ sh -c "grep '^vfs_' $aff | sort -u"

printf '%s\nsleep 1.5\n' "$DD" >/tmp/dd-sleep
section vfsstat.bt /gtrace /bt/vfsstat.bt -c "sh /tmp/dd-sleep"
section funcs-vfs_read-vfs_write sh -c "grep -e '^vfs_read' -e '^vfs_write' $aff | sort -u"

section bitesize.bt /gtrace /bt/bitesize.bt -c "$BLK"

# gtrace opens no file while it traces (the one probe is attached last).
section quiet /gtrace -e 'kprobe:vfs_open /comm == "gtrace"/ { @opens = count(); }' -c "sleep 1"

# SIGINT while tracing: the maps are printed, the probes go away.
/gtrace -e '
kprobe:vfs_read /comm == "dd"/ { @reads = count(); }
kretprobe:vfs_read /comm == "dd"/ { @bytes = sum(retval); }' >/tmp/bg.out 2>/tmp/bg.err &
pid=$!
wait_links $pid 2 >>/tmp/bg.err
$DD 2>/dev/null
kill -INT $pid
wait $pid
emit sigint $? /tmp/bg.out /tmp/bg.err
# The kernel detaches the probes as gtrace's keeper exits, after gtrace.
wait_detached
section sigint-left cat $kprobes /sys/kernel/tracing/kprobe_events

# SIGKILL while tracing: nothing is left either.
/gtrace -e 'kprobe:vfs_read { @r = count(); } kretprobe:vfs_read { @s = count(); } kprobe:vfs_rea* { @w = count(); }' \
	>/tmp/bg.out 2>/tmp/bg.err &
pid=$!
wait_links $pid $KILL_LINKS >>/tmp/bg.err
section sigkill-before cat $kprobes
kill -KILL $pid
wait $pid
emit sigkill $? /tmp/bg.out /tmp/bg.err
wait_detached
section sigkill-left cat $kprobes /sys/kernel/tracing/kprobe_events

section left cat $kprobes /sys/kernel/tracing/kprobe_events /sys/kernel/tracing/uprobe_events
`

// buildTestdata builds the Go program tests/testdata/NAME, statically
// linked for the guest, and returns its path.
func buildTestdata(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, "../testdata/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

// vmShellFuncs are the guest shell functions that print each command's
// output as a section parseVMSections reads.
const vmShellFuncs = `
# emit NAME STATUS OUT ERR prints a section: the files OUT and ERR and
# the exit status.
emit() {
	printf '@@@@ section %s %s\n' "$1" "$2"
	cat "$3"
	printf '\n@@@@ stderr\n'
	cat "$4"
	printf '\n@@@@ end\n'
}

# section NAME CMD... runs CMD and prints what it did as section NAME.
section() {
	name=$1
	shift
	"$@" >/tmp/out 2>/tmp/err
	emit "$name" $? /tmp/out /tmp/err
}

# stop NAME PID sends SIGINT to the gtrace PID, waits for it and prints
# its output, in /tmp/NAME.out and /tmp/NAME.err, as section NAME.
stop() {
	kill -INT $2
	wait $2
	emit $1 $? /tmp/$1.out /tmp/$1.err
}

# wait_for TEST MESSAGE runs the shell test TEST every 0.1 s until it
# holds, for at most 60 s, then says MESSAGE.
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "$2 after 60 s"
			return 1
		fi
		sleep 0.1
	done
}

# wait_detached waits until no kprobe is registered.
wait_detached() {
	wait_for '[ -z "$(cat $kprobes)" ]' "kprobes still registered"
}

# wait_links PID N waits until process PID holds N BPF links.
wait_links() {
	wait_for "[ \$(grep -l '^link_type:' /proc/$1/fdinfo/* 2>/dev/null | wc -l) -ge $2 ]" "process $1 has not attached $2 links"
}
`

// vmSection is what one command in the guest did.
type vmSection struct {
	stdout, stderr string
	status         int
}

// vmTools are Debian's bpftrace tools that the guest kernels support.
// biolatency.bt and biosnoop.bt are not among them: they probe
// blk_account_io_start or __blk_account_io_start, which neither kernel
// lets a kprobe attach to (6.1 has neither symbol; 6.12 has the first but
// not among its traceable functions). The block subtest reads the same
// requests with kprobe:blk_mq_start_request instead.
var vmTools = []string{"vfscount", "vfsstat", "bitesize"}

// runVMScript boots kernel k with the harness's NVMe namespaces, runs
// vmGuestScript and returns its sections by name. $BLK reads nvme0n1,
// the conventional one.
func runVMScript(t *testing.T, k vmtest.Kernel, gtrace string) vmSections {
	t.Helper()
	files := map[string]string{"/gtrace": gtrace}
	for _, tool := range vmTools {
		files["/bt/"+tool+".bt"] = "/usr/sbin/" + tool + ".bt"
	}
	return guestSections(t, vmtest.Config{
		Kernel: k,
		Files:  files,
		Env: map[string]string{"OFF": strconv.Itoa(vmFirstInsn[k.Name]),
			"KILL_LINKS": strconv.Itoa(vmKillLinks[k.Name])},
		NVMe:    true,
		Timeout: 5 * time.Minute,
	}, vmGuestScript)
}

// guestSections boots cfg's guest with script as its command, and
// returns the sections of its output by name; a script that fails, or
// output that is no sections, fails t.
func guestSections(t *testing.T, cfg vmtest.Config, script string) vmSections {
	t.Helper()
	res := vmtest.Run(t, cfg, "sh", "-c", script)
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	sections, err := parseVMSections(res.Stdout)
	if err != nil {
		t.Fatalf("%v\nguest stdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
	}
	return sections
}

// vmSections are the sections of a guest script's output, by name.
type vmSections map[string]vmSection

// get returns the named section and logs it, failing t if there is none
// or its command did not exit with status.
func (ss vmSections) get(t *testing.T, name string, status int) vmSection {
	t.Helper()
	s, ok := ss[name]
	if !ok {
		t.Fatalf("no section %s in the guest's output", name)
	}
	t.Logf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, s.status, s.stdout, s.stderr)
	if s.status != status {
		t.Fatalf("%s exited %d, want %d", name, s.status, status)
	}
	return s
}

// parseVMSections splits the guest script's output into its sections.
func parseVMSections(out string) (vmSections, error) {
	sections := vmSections{}
	chunks := strings.Split(out, "@@@@ section ")
	for _, chunk := range chunks[1:] {
		header, rest, _ := strings.Cut(chunk, "\n")
		name, status, _ := strings.Cut(header, " ")
		code, err := strconv.Atoi(status)
		stdout, rest, ok1 := strings.Cut(rest, "\n@@@@ stderr\n")
		stderr, _, ok2 := strings.Cut(rest, "\n@@@@ end\n")
		if err != nil || !ok1 || !ok2 {
			return nil, fmt.Errorf("garbled section %q", header)
		}
		sections[name] = vmSection{stdout: stdout, stderr: stderr, status: code}
	}
	return sections, nil
}

// vmHistLine is a histogram row: its bucket and count.
var vmHistLine = regexp.MustCompile(`^(\[[^\]]*[\])])\s+(\d+) \|@*\s*\|$`)

// vmHist returns the rows with a non-zero count of the histogram printed
// under the line head (such as "@ret:"), by bucket; nil if there is none.
func vmHist(out, head string) map[string]int {
	_, rest, ok := strings.Cut("\n"+out, "\n"+head+"\n")
	if !ok {
		return nil
	}
	rows := map[string]int{}
	for _, line := range strings.Split(rest, "\n") {
		m := vmHistLine.FindStringSubmatch(line)
		if m == nil {
			break
		}
		if n, _ := strconv.Atoi(m[2]); n > 0 {
			rows[m[1]] = n
		}
	}
	return rows
}

// vmKeyLine is a map entry with a one-part key: "@[vfs_read]: 4".
var vmKeyLine = regexp.MustCompile(`^@\[([^\],]+)\]: (\d+)$`)

// vmCounts sums the entries of @[key] = count() over every time the map
// is printed, by key.
func vmCounts(out string) map[string]int {
	counts := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		if m := vmKeyLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			counts[m[1]] += n
		}
	}
	return counts
}

// vmStackEntry is a map entry keyed by a kernel stack: its frames, each
// on a line of its own indented by 8 spaces, and its count.
var vmStackEntry = regexp.MustCompile(`(?m)^@\[\n((?: {8}\S+\n)+)\]: (\d+)$`)

// vmLines returns the non-empty lines of s.
func vmLines(s string) []string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// vmAttaching returns N of the "Attached N probes" line of gtrace's
// stderr, or -1.
func vmAttaching(stderr string) int {
	m := regexp.MustCompile(`(?m)^Attached (\d+) probes?$`).FindStringSubmatch(stderr)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// vmReadRet is vfs_read's return values for $DD.
var vmReadRet = map[string]int{"[0]": 1, "[1K, 2K)": 1, "[4K, 8K)": 2}

func TestVMKprobes(t *testing.T) {
	gtrace := vmtest.BuildGtrace(t)
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := runVMScript(t, k, gtrace)
			section := sections.get
			// hasLines fails t for each line of want missing in out.
			hasLines := func(t *testing.T, out string, want ...string) {
				t.Helper()
				got := strings.Split(out, "\n")
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("no line %q", w)
					}
				}
			}
			checkHist := func(t *testing.T, out, head string, want map[string]int) {
				t.Helper()
				if got := vmHist(out, head); !maps.Equal(got, want) {
					t.Errorf("%s got %v, want %v", head, got, want)
				}
			}

			t.Run("kprobe", func(t *testing.T) {
				s := section(t, "kprobe", 0)
				if n := vmAttaching(s.stderr); n != 2 {
					t.Errorf("attached %d probes, want 2", n)
				}
				hasLines(t, s.stdout, "@reads: 4", "@bytes: 10000",
					"@func[vfs_read]: 4", "@probe[kprobe:vfs_read]: 4", "@rfunc[vfs_read, kretprobe:vfs_read]: 4")
				checkHist(t, s.stdout, "@size:", map[string]int{"[4K, 8K)": 4})
				checkHist(t, s.stdout, "@ret:", vmReadRet)
			})

			t.Run("offset", func(t *testing.T) {
				s := section(t, "offset", 0)
				off := vmFirstInsn[k.Name]
				// The probe's int3 is one byte: the stack starts
				// after it.
				hasLines(t, s.stdout, "@[kprobe:vfs_read, vfs_read]: 4",
					fmt.Sprintf("@[kprobe:vfs_read+%d, vfs_read]: 4", off),
					"@top[", fmt.Sprintf("        vfs_read+%d", off+1))
			})

			t.Run("errors", func(t *testing.T) {
				for _, c := range []struct{ name, probe string }{
					{"bad-offset", "kprobe:vfs_read+2"},
					{"no-function", "kprobe:gtrace_vm_no_such_function"},
				} {
					s := section(t, c.name, 1)
					if !strings.Contains(s.stderr, "ERROR: Unable to attach probe: "+c.probe+". ") {
						t.Errorf("%s: the error does not name %s", c.name, c.probe)
					}
					if strings.Contains(s.stderr, "no kprobes") {
						t.Errorf("%s: the error says that the kernel has no kprobes", c.name)
					}
				}
			})

			t.Run("wildcard", func(t *testing.T) {
				s := section(t, "wildcard", 0)
				funcs := vmLines(section(t, "funcs-vfs_rea", 0).stdout)
				if len(funcs) < 2 || !slices.Contains(funcs, "vfs_read") {
					t.Fatalf("traceable vfs_rea* functions: %q", funcs)
				}
				if n := vmAttaching(s.stderr); n != len(funcs) {
					t.Errorf("attached %d probes, want %d: %q", n, len(funcs), funcs)
				}
				hasLines(t, s.stdout, "@[kprobe:vfs_read, vfs_read]: 4")
				entry := regexp.MustCompile(`^@\[kprobe:(\w+), (\w+)\]: \d+$`)
				for _, line := range vmLines(s.stdout) {
					m := entry.FindStringSubmatch(line)
					if m == nil || m[1] != m[2] || !slices.Contains(funcs, m[1]) {
						t.Errorf("entry %q: want @[kprobe:F, F] for a traceable vfs_rea* F", line)
					}
				}
			})

			t.Run("fentry", func(t *testing.T) {
				s := section(t, "fentry", 0)
				if n := vmAttaching(s.stderr); n != 2 {
					t.Errorf("attached %d probes, want 2", n)
				}
				hasLines(t, s.stdout, "@name[gtrace-vm-data]: 4",
					"@f[vfs_read, fentry:vfs_read]: 4", "@x[gtrace-vm-data, 4096]: 4", "@bytes: 10000")
				checkHist(t, s.stdout, "@count:", map[string]int{"[4K, 8K)": 4})
				checkHist(t, s.stdout, "@ret:", vmReadRet)
			})

			t.Run("struct", func(t *testing.T) {
				s := section(t, "struct", 0)
				hasLines(t, s.stdout, "@[gtrace-vm-data, dd, 10000]: 4", "@tgid[0]: 4")
			})

			t.Run("kstack", func(t *testing.T) {
				s := section(t, "kstack", 0)
				stacks := vmStackEntry.FindAllStringSubmatch(s.stdout, -1)
				if len(stacks) != 1 || stacks[0][2] != "4" {
					t.Fatalf("want one stack seen 4 times, got %q", stacks)
				}
				frames := strings.Fields(stacks[0][1])
				if len(frames) < 3 || !regexp.MustCompile(`^vfs_read\+\d+$`).MatchString(frames[0]) ||
					!strings.HasPrefix(frames[1], "ksys_read+") ||
					!strings.HasPrefix(frames[len(frames)-1], "entry_SYSCALL_64") {
					t.Errorf("frames %q: want vfs_read, ksys_read, ..., entry_SYSCALL_64*", frames)
				}
			})

			t.Run("block", func(t *testing.T) {
				s := section(t, "block", 0)
				var want []string
				for i := range 8 {
					want = append(want, fmt.Sprintf("@io[nvme0n1, 4096, %d]: 1", 8*i))
				}
				got := vmLines(harness.StripAttaching(s.stdout))
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("got %q, want %q", got, want)
				}
			})

			t.Run("vfscount.bt", func(t *testing.T) {
				s := section(t, "vfscount.bt", 0)
				funcs := vmLines(section(t, "funcs-vfs_", 0).stdout)
				// BEGIN and every traceable vfs_ function.
				if n := vmAttaching(s.stderr); n != len(funcs)+1 {
					t.Errorf("attached %d probes, want %d", n, len(funcs)+1)
				}
				hasLines(t, s.stdout, "Tracing VFS calls... Hit Ctrl-C to end.")
				// The whole system is traced: at least dd's calls.
				counts := vmCounts(s.stdout)
				for fn, min := range map[string]int{"vfs_read": 4, "vfs_write": 3, "vfs_open": 1} {
					if counts[fn] < min {
						t.Errorf("@[%s] = %d, want at least %d", fn, counts[fn], min)
					}
				}
				for fn := range counts {
					if !slices.Contains(funcs, fn) {
						t.Errorf("@[%s]: not a traceable vfs_ function", fn)
					}
				}
			})

			t.Run("vfsstat.bt", func(t *testing.T) {
				s := section(t, "vfsstat.bt", 0)
				funcs := vmLines(section(t, "funcs-vfs_read-vfs_write", 0).stdout)
				// The wildcards, vfs_fsync, vfs_open and vfs_create,
				// BEGIN, interval and END.
				if n := vmAttaching(s.stderr); n != len(funcs)+6 {
					t.Errorf("attached %d probes, want %d", n, len(funcs)+6)
				}
				hasLines(t, s.stdout, "Tracing key VFS calls... Hit Ctrl-C to end.")
				if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d$`).MatchString(s.stdout) {
					t.Error("no time() line from the interval probe")
				}
				counts := vmCounts(s.stdout)
				for fn, min := range map[string]int{"vfs_read": 4, "vfs_write": 3, "vfs_open": 1} {
					if counts[fn] < min {
						t.Errorf("@[%s] = %d over the intervals, want at least %d", fn, counts[fn], min)
					}
				}
			})

			t.Run("bitesize.bt", func(t *testing.T) {
				s := section(t, "bitesize.bt", 0)
				if n := vmAttaching(s.stderr); n != 3 {
					t.Errorf("attached %d probes, want 3", n)
				}
				hasLines(t, s.stdout, "I/O size (bytes) histograms by process name:")
				checkHist(t, s.stdout, "@[dd]:", map[string]int{"[4K, 8K)": 8})
			})

			t.Run("quiet", func(t *testing.T) {
				// Tools such as vfsstat.bt count what gtrace does.
				s := section(t, "quiet", 0)
				if strings.Contains(s.stdout, "@opens") {
					t.Error("gtrace opened files while tracing")
				}
			})

			t.Run("sigint", func(t *testing.T) {
				s := section(t, "sigint", 0)
				hasLines(t, s.stdout, "@reads: 4", "@bytes: 10000")
				if left := section(t, "sigint-left", 0).stdout; left != "" {
					t.Errorf("left after SIGINT:\n%s", left)
				}
			})

			t.Run("sigkill", func(t *testing.T) {
				before := section(t, "sigkill-before", 0).stdout
				// vfs_read is probed three times: kprobe, kretprobe,
				// and the wildcard, a kprobe only without kprobe.multi.
				want := map[string]int{"6.1": 3, "6.12": 2}[k.Name]
				if n := strings.Count(before, " vfs_read+0x"); n != want {
					t.Errorf("%d kprobes on vfs_read while tracing, want %d", n, want)
				}
				section(t, "sigkill", 137)
				if left := section(t, "sigkill-left", 0).stdout; left != "" {
					t.Errorf("left after SIGKILL:\n%s", left)
				}
			})

			t.Run("left", func(t *testing.T) {
				if left := section(t, "left", 0).stdout; left != "" {
					t.Errorf("left at the end:\n%s", left)
				}
			})
		})
	}
}

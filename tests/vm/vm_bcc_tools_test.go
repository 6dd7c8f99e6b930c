package vm

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// The tests here run the pattern tools, funccount, funclatency and
// stackcount, on kernel functions, by kprobes, which the host does not
// have: under each kernel, one boot runs every command as a section.
// dd reads vmBenchReads bytes one at a time, each read a vfs_read; the
// guest's other processes and gtrace itself may add a few. vfsstat
// prints one line of 5 seconds, in which dd reads and writes as many
// bytes one at a time, and the workload sleeps past the line. argdist
// counts the reads of one byte by vfs_read's argument, and puts those
// that return 1 in a histogram, both printed once, at the end.

// vmBCCToolsScript is the guest's shell script.
const vmBCCToolsScript = vmShellFuncs + `
DD="dd if=/dev/zero of=/dev/null bs=1 count=$READS"
section funccount /gtrace tools funccount -c "$DD" 'vfs_rea*'
section funccount-r /gtrace tools funccount -r -c "$DD" '^vfs_read$'
section funclatency /gtrace tools funclatency -u -c "$DD" vfs_read
section funclatency-F /gtrace tools funclatency -F -c "$DD" 'p:vfs_rea*'
section stackcount /gtrace tools stackcount -K -f -c "$DD" vfs_read
printf '%s\n' "$DD" 'sleep 7' >/tmp/vfswork
section vfsstat /gtrace tools vfsstat -c "sh /tmp/vfswork" 5 1
section argdist /gtrace tools argdist -i 60 -c "$DD" -C 'p::vfs_read(struct file *f, char *buf, size_t n):size_t:n:n==1'
section argdist-r /gtrace tools argdist -i 60 -c "$DD" -H 'r::vfs_read():long:$retval:$retval==1'
`

func TestVMBCCTools(t *testing.T) {
	files := map[string]string{"/gtrace": vmtest.BuildGtrace(t)}
	env := map[string]string{"READS": strconv.Itoa(vmBenchReads)}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, Env: env, Timeout: 5 * time.Minute}, vmBCCToolsScript)
			checkVMBCCTools(t, sections)
		})
	}
}

// checkVMBCCTools checks the sections of vmBCCToolsScript.
func checkVMBCCTools(t *testing.T, sections vmSections) {
	// reads checks that n counts dd's reads, and at most a hundred
	// others.
	reads := func(t *testing.T, what string, n int) {
		t.Helper()
		if n < vmBenchReads || n > vmBenchReads+100 {
			t.Errorf("%s: %d, want dd's %d reads and at most 100 others", what, n, vmBenchReads)
		}
	}
	calls := regexp.MustCompile(`(?m)^@calls\[(\S+)\]: (\d+)$`)
	for _, name := range []string{"funccount", "funccount-r"} {
		t.Run(name, func(t *testing.T) {
			got := map[string]int{}
			for _, m := range calls.FindAllStringSubmatch(sections.get(t, name, 0).stdout, -1) {
				got[m[1]], _ = strconv.Atoi(m[2])
			}
			reads(t, "kprobe:vfs_read", got["kprobe:vfs_read"])
			for probe := range got {
				if name == "funccount-r" && probe != "kprobe:vfs_read" || !strings.HasPrefix(probe, "kprobe:vfs_rea") {
					t.Errorf("%s counted %s", name, probe)
				}
			}
		})
	}
	total := func(hist map[string]int) int {
		n := 0
		for _, c := range hist {
			n += c
		}
		return n
	}
	t.Run("funclatency", func(t *testing.T) {
		reads(t, "@usecs", total(vmHist(sections.get(t, "funclatency", 0).stdout, "@usecs:")))
	})
	t.Run("funclatency-F", func(t *testing.T) {
		reads(t, "@nsecs_by_func[vfs_read]", total(vmHist(sections.get(t, "funclatency-F", 0).stdout, "@nsecs_by_func[vfs_read]:")))
	})
	t.Run("stackcount", func(t *testing.T) {
		n := 0
		for _, l := range vmLines(sections.get(t, "stackcount", 0).stdout) {
			stack, count, _ := strings.Cut(l, " ")
			if strings.HasSuffix(stack, ";ksys_read;vfs_read") {
				c, _ := strconv.Atoi(count)
				n += c
			}
		}
		reads(t, "stacks ...;ksys_read;vfs_read", n)
	})
	t.Run("argdist", func(t *testing.T) {
		m := regexp.MustCompile(`(?m)^@counts\[1\]: (\d+)$`).FindStringSubmatch(sections.get(t, "argdist", 0).stdout)
		if m == nil {
			t.Fatalf("argdist printed no @counts[1]")
		}
		n, _ := strconv.Atoi(m[1])
		reads(t, "@counts[1]", n)
	})
	t.Run("argdist-r", func(t *testing.T) {
		reads(t, "@hist", total(vmHist(sections.get(t, "argdist-r", 0).stdout, "@hist:")))
	})
	t.Run("vfsstat", func(t *testing.T) {
		lines := vmLines(sections.get(t, "vfsstat", 0).stdout)
		if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "TIME READ/s WRITE/s FSYNC/s OPEN/s CREATE/s" {
			t.Fatalf("vfsstat printed %q, want its header and one line", lines)
		}
		f := strings.Fields(lines[1])
		if len(f) != 6 || !regexp.MustCompile(`^\d\d:\d\d:\d\d:$`).MatchString(f[0]) {
			t.Fatalf("vfsstat's line %q is not TIME: and five rates", lines[1])
		}
		// The line's 5 seconds hold dd's reads and writes, and at most
		// a hundred others of each.
		for i, what := range []string{"READ/s", "WRITE/s"} {
			n, _ := strconv.Atoi(f[1+i])
			if n < vmBenchReads/5 || n > (vmBenchReads+100)/5 {
				t.Errorf("vfsstat %s: %d, want dd's %d in 5 seconds and at most 100 others", what, n, vmBenchReads)
			}
		}
	})
}

package probe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/btf"

	"gtrace/internal/testutils"
	"gtrace/kernel"
)

func TestListPerfEvents(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"software:cpu*", []string{"software:cpu-clock:", "software:cpu-migrations:", "software:cpu:"}},
		{"s:*faults", nil}, // the names end in ':', so nothing ends in "faults"
		{"software:*faults:", []string{
			"software:alignment-faults:", "software:emulation-faults:", "software:faults:",
			"software:major-faults:", "software:minor-faults:", "software:page-faults:",
		}},
		{"software:cs:", []string{"software:cs:"}},
		{"software:cpu-clock", nil}, // bpftrace needs the trailing ':' or a '*'
		{"hardware:*cycles*", []string{
			"hardware:bus-cycles:", "hardware:cpu-cycles:", "hardware:cycles:", "hardware:ref-cycles:",
		}},
		{"HARDWARE:branches:", []string{"hardware:branches:"}},
		{"h:branches:,s:dummy:", []string{"hardware:branches:", "software:dummy:"}},
		// bpftrace v0.26 lists the units of interval and profile, but
		// only when the pattern names the probe type.
		{"interval:*", []string{"interval:hz:", "interval:ms:", "interval:s:", "interval:us:"}},
		{"p:", []string{"profile:hz:", "profile:ms:", "profile:s:", "profile:us:"}},
		{"profile:*s:", []string{"profile:ms:", "profile:s:", "profile:us:"}},
		{"i:hz", nil},
		{"in*:*", nil},
		{"*:hz:", nil},
	}
	for _, tt := range tests {
		got, err := List(tt.pattern, ListOptions{})
		if err != nil {
			t.Errorf("List(%q): %v", tt.pattern, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("List(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}

	all, err := List("software:*", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// One line per name and per alias.
	if want := len(kernel.SoftwareEvents) + 3; len(all) != want {
		t.Errorf("software:* lists %d probes, want %d: %q", len(all), want, all)
	}
}

// TestListTracepointsLive compares the listing with the events directory.
func TestListTracepointsLive(t *testing.T) {
	testutils.RequireRoot(t)
	dir, err := kernel.TracefsDir()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "events/syscalls/sys_enter_read*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		testutils.Skip(t, "kernel has no syscalls:sys_enter_read* tracepoints")
	}
	var want []string
	for _, p := range paths {
		want = append(want, "tracepoint:syscalls:"+filepath.Base(p))
	}
	slices.Sort(want)

	for _, pattern := range []string{"tracepoint:syscalls:sys_enter_read*", "t:syscalls:sys_enter_read*"} {
		got, err := List(pattern, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("List(%q) = %q, want %q", pattern, got, want)
		}
	}

	got, err := List("tracepoint:syscalls:sys_enter_read", ListOptions{Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	wantVerbose := []string{
		"tracepoint:syscalls:sys_enter_read",
		"    int __syscall_nr",
		"    unsigned int fd",
		"    char * buf",
		"    size_t count",
	}
	if !reflect.DeepEqual(got, wantVerbose) {
		t.Errorf("ListVerbose = %q, want %q", got, wantVerbose)
	}

	// A bare word is matched against probe names of every provider.
	got, err = List("sched_switch", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "tracepoint:sched:sched_switch") {
		t.Errorf("List(sched_switch) = %q, want tracepoint:sched:sched_switch in it", got)
	}
	got, err = List("*sched_switch", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "tracepoint:sched:sched_switch") {
		t.Errorf("List(*sched_switch) = %q, want tracepoint:sched:sched_switch in it", got)
	}
}

func TestListRawTracepointsLive(t *testing.T) {
	testutils.RequireRoot(t)
	got, err := List("rawtracepoint:sched_switch", ListOptions{Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		testutils.Skip(t, "kernel has no BTF for raw tracepoints")
	}
	if got[0] != "rawtracepoint:vmlinux:sched_switch" {
		t.Errorf("first line = %q, want rawtracepoint:vmlinux:sched_switch", got[0])
	}
	if !slices.Contains(got, "    struct task_struct * prev") {
		t.Errorf("arguments = %q, want struct task_struct * prev among them", got[1:])
	}

	all, err := List("rt:*", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(all) || len(all) < 100 {
		t.Errorf("rt:* gave %d probes, sorted %v; want many, sorted", len(all), slices.IsSorted(all))
	}
}

// TestListFunctions lists kernel functions for fentry and kprobes, and a
// binary's functions for uprobes.
func TestListFunctions(t *testing.T) {
	got, err := List("fexit:vfs_read", ListOptions{Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fexit:vfs_read", "    struct file * file", "    char * buf", "    size_t count", "    loff_t * pos", "    ssize_t retval"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fexit:vfs_read lists %q, want %q", got, want)
	}
	got, err = List("kprobe:vfs_read", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Listed from tracefs as bpftrace lists them, also where the kernel
	// has no kprobes to attach them with.
	if want := []string{"kprobe:vfs_read"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kprobe:vfs_read lists %q, want %q", got, want)
	}
	got, err = List("uprobe:libc:getaddrinfo", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "uprobe:/") || !strings.HasSuffix(got[0], "libc.so.6:getaddrinfo") {
		t.Errorf("uprobe:libc:getaddrinfo lists %q", got)
	}
}

// TestListTypesLive lists kernel structs whose layout has not changed in
// years, as bpftrace v0.26 prints them for -lv 'struct X': named by the
// BTF they are from.
func TestListTypesLive(t *testing.T) {
	if _, err := btf.LoadKernelSpec(); err != nil {
		testutils.Skip(t, "no kernel BTF: "+err.Error())
	}
	tests := []struct {
		pattern string
		verbose bool
		want    string
	}{
		{"struct list_head", true, "vmlinux: struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n"},
		{"struct  callback_head", true, "vmlinux: struct callback_head {\n\tstruct callback_head *next;\n\tvoid (*func)(struct callback_head *);\n};\n"},
		{"struct qstr", true, "vmlinux: struct qstr {\n\tunion {\n\t\tstruct {\n\t\t\tu32 hash;\n\t\t\tu32 len;\n\t\t};\n\t\tu64 hash_len;\n\t};\n\tconst unsigned char *name;\n};\n"},
		{"struct list_head,struct hlist_node", true, "vmlinux: struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n\n" +
			"vmlinux: struct hlist_node {\n\tstruct hlist_node *next;\n\tstruct hlist_node **pprev;\n};\n"},
		{"struct list_hea*", true, "vmlinux: struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n"},
		{"struct list_head", false, "struct list_head"},
		{"struct callback_hea*", false, "struct callback_head"},
		{"enum pid_type", true, "vmlinux: enum pid_type {\n\tPIDTYPE_PID = 0,\n\tPIDTYPE_TGID = 1,\n\tPIDTYPE_PGID = 2,\n\tPIDTYPE_SID = 3,\n\tPIDTYPE_MAX = 4,\n};\n"},
		{"struct no_such_struct*", false, ""},
	}
	for _, tt := range tests {
		lines, err := List(tt.pattern, ListOptions{Verbose: tt.verbose})
		if err != nil {
			t.Errorf("list %q: %v", tt.pattern, err)
			continue
		}
		if got := strings.Join(lines, "\n"); got != tt.want {
			t.Errorf("list %q (verbose %v):\n%s\nwant:\n%s", tt.pattern, tt.verbose, got, tt.want)
		}
	}

	for _, pattern := range []string{"struct no_such_struct", "union list_head", "enum no_such_enum"} {
		if _, err := List(pattern, ListOptions{Verbose: true}); err == nil || !strings.Contains(err.Error(), "not in the kernel's BTF") {
			t.Errorf("list %q: error %v, want one saying it is not in the kernel's BTF", pattern, err)
		}
	}
}

// TestListScript lists a script's attach points as bpftrace -l -e does.
func TestListScript(t *testing.T) {
	got, err := ListScript([]string{"BEGIN", "i:ms:100", "software:cpu-clock:1000", "h:cycles", "self:signal:SIGUSR1", "END"}, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"interval:ms:", "software:cpu-clock:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ListScript = %q, want %q", got, want)
	}
}

// TestListPid lists the functions of the files a process maps, as -p PID
// lists them: a pattern that names no binary takes them all.
func TestListPid(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	pid := sleep.Process.Pid
	// The dynamic loader maps libc a moment after exec.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid)); strings.Contains(string(maps), "libc") {
			break
		}
	}
	for _, pattern := range []string{"uprobe:*:clock_nanosleep", "uprobe:clock_nanosleep"} {
		got, err := List(pattern, ListOptions{Pid: pid})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], "uprobe:/") || !strings.HasSuffix(got[0], "libc.so.6:clock_nanosleep") {
			t.Errorf("List(%q, -p) = %q, want libc's clock_nanosleep", pattern, got)
		}
		// Without -p, a pattern naming no binary names none.
		if got, _ := List(pattern, ListOptions{}); got != nil {
			t.Errorf("List(%q) = %q, want nothing", pattern, got)
		}
	}
}

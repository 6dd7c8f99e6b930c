package kernel

import (
	"gtrace/internal/testutils"

	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
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
		{"kprobe:*", nil},
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
		got, err := ListProbes(tt.pattern)
		if err != nil {
			t.Errorf("ListProbes(%q): %v", tt.pattern, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ListProbes(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}

	all, err := ListProbes("software:*")
	if err != nil {
		t.Fatal(err)
	}
	// One line per name and per alias.
	if want := len(SoftwareEvents) + 3; len(all) != want {
		t.Errorf("software:* lists %d probes, want %d: %q", len(all), want, all)
	}
}

func TestLookupPerfEvent(t *testing.T) {
	for _, name := range []string{"cpu-clock", "cpu"} {
		ev, ok := LookupPerfEvent(SoftwareEvents, name)
		if !ok || ev.Config != 0 || ev.DefaultPeriod != 1000000 {
			t.Errorf("LookupPerfEvent(%q) = %+v, %v", name, ev, ok)
		}
	}
	if ev, ok := LookupPerfEvent(HardwareEvents, "cycles"); !ok || ev.Name != "cpu-cycles" {
		t.Errorf("LookupPerfEvent(cycles) = %+v, %v", ev, ok)
	}
	if _, ok := LookupPerfEvent(SoftwareEvents, ""); ok {
		t.Error("the empty name matched an event without an alias")
	}
}

// TestListTracepointsLive compares the listing with the events directory.
func TestListTracepointsLive(t *testing.T) {
	testutils.RequireRoot(t)
	dir, err := TracefsDir()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "events/syscalls/sys_enter_read*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Skip("kernel has no syscalls:sys_enter_read* tracepoints")
	}
	var want []string
	for _, p := range paths {
		want = append(want, "tracepoint:syscalls:"+filepath.Base(p))
	}
	slices.Sort(want)

	for _, pattern := range []string{"tracepoint:syscalls:sys_enter_read*", "t:syscalls:sys_enter_read*"} {
		got, err := ListProbes(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ListProbes(%q) = %q, want %q", pattern, got, want)
		}
	}

	got, err := ListProbesVerbose("tracepoint:syscalls:sys_enter_read")
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
		t.Errorf("ListProbesVerbose = %q, want %q", got, wantVerbose)
	}

	// A bare word is matched against probe names of every provider.
	got, err = ListProbes("sched_switch")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "tracepoint:sched:sched_switch") {
		t.Errorf("ListProbes(sched_switch) = %q, want tracepoint:sched:sched_switch in it", got)
	}
	got, err = ListProbes("*sched_switch")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "tracepoint:sched:sched_switch") {
		t.Errorf("ListProbes(*sched_switch) = %q, want tracepoint:sched:sched_switch in it", got)
	}
}

func TestListRawTracepointsLive(t *testing.T) {
	testutils.RequireRoot(t)
	got, err := ListProbesVerbose("rawtracepoint:sched_switch")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Skip("kernel has no BTF for raw tracepoints")
	}
	if got[0] != "rawtracepoint:vmlinux:sched_switch" {
		t.Errorf("first line = %q, want rawtracepoint:vmlinux:sched_switch", got[0])
	}
	if !slices.Contains(got, "    struct task_struct * prev") {
		t.Errorf("arguments = %q, want struct task_struct * prev among them", got[1:])
	}

	all, err := ListProbes("rt:*")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(all) || len(all) < 100 {
		t.Errorf("rt:* gave %d probes, sorted %v; want many, sorted", len(all), slices.IsSorted(all))
	}
}

func TestExpandTracepoints(t *testing.T) {
	testutils.RequireRoot(t)
	got, err := ExpandTracepoints("sched:sched_switch")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sched:sched_switch"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ExpandTracepoints(sched:sched_switch) = %q, want %q", got, want)
	}

	got, err = ExpandTracepoints("sched:sched_wak*")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sched:sched_wakeup", "sched:sched_waking"} {
		if !slices.Contains(got, want) {
			t.Errorf("ExpandTracepoints(sched:sched_wak*) = %q, want %s in it", got, want)
		}
	}
	for _, tp := range got {
		if !strings.HasPrefix(tp, "sched:sched_wak") {
			t.Errorf("ExpandTracepoints(sched:sched_wak*) gave %q", tp)
		}
	}

	got, err = ExpandTracepoints("nosuch:event*")
	if err != nil || len(got) != 0 {
		t.Errorf("ExpandTracepoints(nosuch:event*) = %q, %v; want nothing", got, err)
	}
}

func TestTracefsDir(t *testing.T) {
	testutils.RequireRoot(t)
	dir, err := TracefsDir()
	if err != nil {
		t.Fatal(err)
	}
	if !isTracefs(dir) {
		t.Errorf("%s is not tracefs", dir)
	}
}

func TestCDecl(t *testing.T) {
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Char}
	uint := &btf.Int{Name: "unsigned int", Size: 4}
	task := &btf.Struct{Name: "task_struct"}
	tests := []struct {
		typ  btf.Type
		want string
	}{
		{uint, "unsigned int"},
		{&btf.Typedef{Name: "bool", Type: &btf.Int{Name: "_Bool", Size: 1}}, "bool"},
		{&btf.Pointer{Target: task}, "struct task_struct *"},
		{&btf.Pointer{Target: &btf.Const{Type: char}}, "const char *"},
		{&btf.Pointer{Target: &btf.Pointer{Target: char}}, "char **"},
		{&btf.Pointer{Target: &btf.Const{Type: &btf.Pointer{Target: &btf.Const{Type: char}}}}, "const char * const *"},
		{&btf.Const{Type: &btf.Pointer{Target: &btf.Union{Name: "u"}}}, "union u * const"},
		{&btf.Pointer{Target: &btf.Void{}}, "void *"},
		{&btf.Pointer{Target: &btf.Enum{Name: "e"}}, "enum e *"},
		{&btf.Pointer{Target: &btf.Fwd{Name: "f", Kind: btf.FwdStruct}}, "struct f *"},
		{&btf.Array{Type: char, Nelems: 16}, "char [16]"},
		{&btf.Pointer{Target: &btf.FuncProto{
			Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
			Params: []btf.FuncParam{{Type: uint}, {Type: &btf.Pointer{Target: task}}},
		}}, "int (*)(unsigned int, struct task_struct *)"},
		{&btf.Pointer{Target: &btf.FuncProto{Return: &btf.Void{}}}, "void (*)(void)"},
	}
	for _, tt := range tests {
		if got := CDecl(tt.typ, ""); got != tt.want {
			t.Errorf("CDecl(%v) = %q, want %q", tt.typ, got, tt.want)
		}
	}
}

// TestListFunctions lists kernel functions for fentry and kprobes, and a
// binary's functions for uprobes.
func TestListFunctions(t *testing.T) {
	got, err := ListProbesVerbose("fexit:vfs_read")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fexit:vfs_read", "    struct file * file", "    char * buf", "    size_t count", "    loff_t * pos", "    ssize_t retval"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fexit:vfs_read lists %q, want %q", got, want)
	}
	got, err = ListProbes("kprobe:vfs_read")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kprobe:vfs_read"}; HasKprobes() && !reflect.DeepEqual(got, want) || !HasKprobes() && got != nil {
		t.Errorf("kprobe:vfs_read lists %q with kprobes %v", got, HasKprobes())
	}
	got, err = ListProbes("uprobe:libc:getaddrinfo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "uprobe:/") || !strings.HasSuffix(got[0], "libc.so.6:getaddrinfo") {
		t.Errorf("uprobe:libc:getaddrinfo lists %q", got)
	}
}

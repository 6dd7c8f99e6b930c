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
		testutils.Skip(t, "kernel has no syscalls:sys_enter_read* tracepoints")
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
		testutils.Skip(t, "kernel has no BTF for raw tracepoints")
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

// TestTypeDef renders hand-built BTF types and compares them with the text
// libbpf's btf_dump (as vendored by bpftrace v0.26) prints for them, worked
// out from its source: tabs for indentation, anonymous members inlined,
// "(void)" for functions without parameters, unnamed bit fields for holes
// the compiler would not leave, and the packed attribute.
func TestTypeDef(t *testing.T) {
	u8 := &btf.Typedef{Name: "u8", Type: &btf.Int{Name: "unsigned char", Size: 1}}
	u32 := &btf.Typedef{Name: "u32", Type: &btf.Int{Name: "unsigned int", Size: 4}}
	s32 := &btf.Typedef{Name: "s32", Type: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}}
	u64 := &btf.Typedef{Name: "u64", Type: &btf.Int{Name: "long long unsigned int", Size: 8}}
	uchar := &btf.Int{Name: "unsigned char", Size: 1}
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Signed}

	listHead := &btf.Struct{Name: "list_head", Size: 16}
	listHead.Members = []btf.Member{
		{Name: "next", Type: &btf.Pointer{Target: listHead}},
		{Name: "prev", Type: &btf.Pointer{Target: listHead}, Offset: 64},
	}

	callbackHead := &btf.Struct{Name: "callback_head", Size: 16}
	callbackHead.Members = []btf.Member{
		{Name: "next", Type: &btf.Pointer{Target: callbackHead}},
		{Name: "func", Offset: 64, Type: &btf.Pointer{Target: &btf.FuncProto{
			Return: &btf.Void{},
			Params: []btf.FuncParam{{Type: &btf.Pointer{Target: callbackHead}}},
		}}},
	}

	qstr := &btf.Struct{Name: "qstr", Size: 16, Members: []btf.Member{
		{Type: &btf.Union{Size: 8, Members: []btf.Member{
			{Type: &btf.Struct{Size: 8, Members: []btf.Member{
				{Name: "hash", Type: u32},
				{Name: "len", Type: u32, Offset: 32},
			}}},
			{Name: "hash_len", Type: u64},
		}}},
		{Name: "name", Offset: 64, Type: &btf.Pointer{Target: &btf.Const{Type: uchar}}},
	}}

	// A hole after x that a u32 would not leave, and a bit field hole.
	holes := &btf.Struct{Name: "holes", Size: 32, Members: []btf.Member{
		{Name: "x", Type: u64},
		{Name: "y", Type: u32, Offset: 128},
		{Name: "a", Type: u8, Offset: 160, BitfieldSize: 1},
		{Name: "b", Type: u8, Offset: 164, BitfieldSize: 2},
		{Name: "comm", Type: &btf.Array{Type: char, Nelems: 16}, Offset: 168},
		{Name: "get", Offset: 192, Type: &btf.Pointer{Target: &btf.FuncProto{
			Return: &btf.Pointer{Target: listHead},
		}}},
	}}

	packed := &btf.Struct{Name: "__arch_relative_insn", Size: 5, Members: []btf.Member{
		{Name: "op", Type: u8},
		{Name: "raddr", Type: s32, Offset: 8},
	}}

	state := &btf.Struct{Name: "state", Size: 16, Members: []btf.Member{
		{Name: "mode", Type: &btf.Enum{Size: 4, Signed: true, Values: []btf.EnumValue{
			{Name: "MODE_OFF", Value: uint64(0xffffffffffffffff)},
			{Name: "MODE_ON", Value: 1},
		}}},
		{Name: "argv", Offset: 64, Type: &btf.Pointer{Target: &btf.Const{Type: &btf.Pointer{Target: &btf.Const{Type: char}}}}},
	}}

	tests := []struct {
		typ  btf.Type
		want string
	}{
		{listHead, `struct list_head {
	struct list_head *next;
	struct list_head *prev;
};`},
		{callbackHead, `struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *);
};`},
		{qstr, `struct qstr {
	union {
		struct {
			u32 hash;
			u32 len;
		};
		u64 hash_len;
	};
	const unsigned char *name;
};`},
		{holes, `struct holes {
	u64 x;
	long: 64;
	u32 y;
	u8 a: 1;
	char: 3;
	u8 b: 2;
	char comm[16];
	struct list_head * (*get)(void);
};`},
		{packed, `struct __arch_relative_insn {
	u8 op;
	s32 raddr;
} __attribute__((packed));`},
		{state, `struct state {
	enum {
		MODE_OFF = -1,
		MODE_ON = 1,
	} mode;
	const char * const *argv;
};`},
		{&btf.Enum{Name: "pid_type", Size: 4, Values: []btf.EnumValue{
			{Name: "PIDTYPE_PID", Value: 0}, {Name: "PIDTYPE_MAX", Value: 4},
		}}, `enum pid_type {
	PIDTYPE_PID = 0,
	PIDTYPE_MAX = 4,
};`},
	}
	for _, tt := range tests {
		if got := typeDef(tt.typ); got != tt.want {
			t.Errorf("typeDef(%s):\n%s\nwant:\n%s", typeName(tt.typ), got, tt.want)
		}
	}
}

// TestListTypesLive lists kernel structs whose layout has not changed in
// years, as bpftrace v0.26 prints them for -lv 'struct X'.
func TestListTypesLive(t *testing.T) {
	if _, err := btf.LoadKernelSpec(); err != nil {
		testutils.Skip(t, "no kernel BTF: "+err.Error())
	}
	tests := []struct {
		pattern string
		verbose bool
		want    string
	}{
		{"struct list_head", true, "struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n"},
		{"struct  callback_head", true, "struct callback_head {\n\tstruct callback_head *next;\n\tvoid (*func)(struct callback_head *);\n};\n"},
		{"struct qstr", true, "struct qstr {\n\tunion {\n\t\tstruct {\n\t\t\tu32 hash;\n\t\t\tu32 len;\n\t\t};\n\t\tu64 hash_len;\n\t};\n\tconst unsigned char *name;\n};\n"},
		{"struct list_head,struct hlist_node", true, "struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n\n" +
			"struct hlist_node {\n\tstruct hlist_node *next;\n\tstruct hlist_node **pprev;\n};\n"},
		{"struct list_hea*", true, "struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n"},
		{"struct list_head", false, "struct list_head"},
		{"struct callback_hea*", false, "struct callback_head"},
		{"enum pid_type", true, "enum pid_type {\n\tPIDTYPE_PID = 0,\n\tPIDTYPE_TGID = 1,\n\tPIDTYPE_PGID = 2,\n\tPIDTYPE_SID = 3,\n\tPIDTYPE_MAX = 4,\n};\n"},
		{"struct no_such_struct*", false, ""},
	}
	for _, tt := range tests {
		list := ListProbes
		if tt.verbose {
			list = ListProbesVerbose
		}
		lines, err := list(tt.pattern)
		if err != nil {
			t.Errorf("list %q: %v", tt.pattern, err)
			continue
		}
		if got := strings.Join(lines, "\n"); got != tt.want {
			t.Errorf("list %q (verbose %v):\n%s\nwant:\n%s", tt.pattern, tt.verbose, got, tt.want)
		}
	}

	for _, pattern := range []string{"struct no_such_struct", "union list_head", "enum no_such_enum"} {
		if _, err := ListProbesVerbose(pattern); err == nil || !strings.Contains(err.Error(), "not in the kernel's BTF") {
			t.Errorf("list %q: error %v, want one saying it is not in the kernel's BTF", pattern, err)
		}
	}
}

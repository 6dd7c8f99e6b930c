package kernel

import (
	"gtrace/internal/testutils"

	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
)

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

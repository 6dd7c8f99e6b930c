package output

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// Expectations here are worked out from bpftrace v0.26's source
// (src/types_format.cpp, src/output/text.cpp, src/output/json.cpp) for
// what the installed bpftrace cannot show.

func TestHistBucket(t *testing.T) {
	tests := []struct {
		v    int64
		k    int
		want int
	}{
		{-5, 0, 0},
		{0, 0, 1},
		{1, 0, 2},
		{2, 0, 3},
		{3, 0, 3},
		{4, 0, 4},
		{1023, 0, 11},
		{1024, 0, 12},
		{1<<62 + 5, 0, 64},
		{1<<63 - 1, 0, 64},
		{7, 3, 8},
		{15, 3, 16},
		{16, 3, 17},
		{225, 2, 28}, // the example in bpftrace's codegen
		{1<<63 - 1, 5, (64 - 5) << 5},
	}
	for _, tt := range tests {
		if got := HistBucket(tt.v, tt.k); got != tt.want {
			t.Errorf("HistBucket(%d, %d) = %d, want %d", tt.v, tt.k, got, tt.want)
		}
	}
}

func TestLHistBucket(t *testing.T) {
	tests := []struct {
		v, min, max, step int64
		want              int
	}{
		{-1, 0, 100, 10, 0},
		{0, 0, 100, 10, 1},
		{9, 0, 100, 10, 1},
		{99, 0, 100, 10, 10},
		{100, 0, 100, 10, 11},
		{1 << 40, 0, 100, 10, 11},
		{9, 0, 10, 3, 4},
		{10, 0, 10, 3, 4},
		{4, 5, 45, 5, 0},
		{5, 5, 45, 5, 1},
	}
	for _, tt := range tests {
		if got := LHistBucket(tt.v, tt.min, tt.max, tt.step); got != tt.want {
			t.Errorf("LHistBucket(%d, %d, %d, %d) = %d, want %d", tt.v, tt.min, tt.max, tt.step, got, tt.want)
		}
	}
}

// histRow is one histogram line with the bar given in characters.
func histRow(rng string, count int, bar int) string {
	return padRight(rng, 16) + padLeft(strconv.Itoa(count), 8) + " |" +
		padRight(strings.Repeat("@", bar), 52) + "|\n"
}

func TestMapText(t *testing.T) {
	stack := Stack(StackBpftrace, []Frame{{Addr: 0xffff1, Sym: "do_sys_open+12"}, {Addr: 0xffff2, Sym: "entry_SYSCALL_64+100"}})
	tests := []struct {
		name string
		m    *Map
		top  int
		div  uint32
		want string
	}{
		{
			name: "hist with k=3 splits powers of two in eight",
			m:    &Map{Name: "@", Kind: Hist, HistBits: 3, Entries: []Entry{{Buckets: histOf(3, 14, 15, 16, 17, 18, 20)}}},
			want: "@:\n" + histRow("[14]", 1, 26) + histRow("[15]", 1, 26) + histRow("[16, 18)", 2, 52) +
				histRow("[18, 20)", 1, 26) + histRow("[20, 22)", 1, 26) + "\n",
		},
		{
			name: "hist suffixes up to E",
			m:    &Map{Name: "@h", Kind: Hist, Entries: []Entry{{Buckets: histOf(0, 10<<30, 1<<62)}}},
			want: "@h:\n" + histRow("[8G, 16G)", 1, 52) +
				histZeroRows("16G", "32G", "64G", "128G", "256G", "512G", "1T", "2T", "4T", "8T", "16T", "32T", "64T",
					"128T", "256T", "512T", "1P", "2P", "4P", "8P", "16P", "32P", "64P", "128P", "256P", "512P", "1E", "2E", "4E") +
				histRow("[4E, 8E)", 1, 52) + "\n",
		},
		{
			name: "lhist with step 1 prints single values",
			m:    &Map{Name: "@l", Kind: LHist, LMin: 0, LMax: 10, LStep: 1, Entries: []Entry{{Buckets: lhistOf(0, 10, 1, 5, 7, 7, 12)}}},
			want: "@l:\n" + histRow("[5]", 1, 26) + histRow("[6]", 0, 0) + histRow("[7]", 2, 52) + histRow("[8]", 0, 0) +
				histRow("[9]", 0, 0) + histRow("[10, ...)", 1, 26) + "\n",
		},
		{
			name: "hist with nothing counted",
			m:    &Map{Name: "@h", Kind: Hist, Entries: []Entry{{Buckets: make([]uint64, 65)}}},
			want: "@h:\n\n",
		},
		{
			name: "hist divided to zero",
			m:    &Map{Name: "@h", Kind: Hist, Entries: []Entry{{Buckets: histOf(0, 1)}}},
			div:  2,
			want: "@h:\n" + histRow("[1]", 0, 0) + "\n",
		},
		{
			name: "empty map prints nothing",
			m:    &Map{Name: "@c", Kind: Count},
			want: "",
		},
		{
			name: "stack keys",
			m: &Map{Name: "@", Kind: Count, Entries: []Entry{
				{Key: key(stack), Value: Uint(3)},
				{Key: key(Stack(StackBpftrace, []Frame{{Addr: UnwindFailure, Sym: ""}, {Addr: 1, Sym: "never"}})), Value: Uint(4)},
			}},
			want: "@[\n        do_sys_open+12\n        entry_SYSCALL_64+100\n]: 3\n" +
				"@[\n        <unwind failure>\n]: 4\n",
		},
		{
			name: "perf and raw stacks as values",
			m: &Map{Name: "@s", Kind: Scalar, Entries: []Entry{
				{Key: key(Int(1)), Value: Stack(StackPerf, []Frame{{Addr: 0xffffffff81000000, Sym: "f+1"}})},
				{Key: key(Int(2)), Value: Stack(StackRaw, []Frame{{Addr: 0xabc, Sym: "ignored"}})},
			}},
			want: "@s[1]: \n\tffffffff81000000 f+1\n\n@s[2]: \nabc\n\n",
		},
		{
			name: "parentheses of any key are dropped",
			m: &Map{Name: "@m", Kind: Scalar, Entries: []Entry{
				{Key: key(Str("(x)")), Value: Int(1)},
				{Key: key(Tuple(Int(1), Int(2)), Int(3)), Value: Int(2)},
				{Key: key(Tuple(Int(4), Int(5))), Value: Int(3)},
			}},
			want: "@m[x]: 1\n@m[(1, 2), 3]: 2\n@m[4, 5]: 3\n",
		},
		{
			name: "ties keep map order",
			m: &Map{Name: "@c", Kind: Count, Entries: []Entry{
				{Key: key(Str("z")), Value: Uint(1)},
				{Key: key(Str("a")), Value: Uint(1)},
				{Key: key(Str("m")), Value: Uint(0)},
			}},
			want: "@c[m]: 0\n@c[z]: 1\n@c[a]: 1\n",
		},
		{
			name: "unsigned values sort unsigned",
			m: &Map{Name: "@u", Kind: Sum, Entries: []Entry{
				{Key: key(Int(1)), Value: Uint(1 << 63)},
				{Key: key(Int(2)), Value: Uint(1)},
			}},
			want: "@u[2]: 1\n@u[1]: 9223372036854775808\n",
		},
		{
			name: "hists sort by total count, top keeps the largest",
			m: &Map{Name: "@h", Kind: Hist, Entries: []Entry{
				{Key: key(Int(1)), Buckets: histOf(0, 1, 1, 1)},
				{Key: key(Int(2)), Buckets: histOf(0, 1)},
				{Key: key(Int(3)), Buckets: histOf(0, 1, 1)},
			}},
			top:  2,
			want: "@h[3]:\n" + histRow("[1]", 2, 52) + "\n" + "@h[1]:\n" + histRow("[1]", 3, 52) + "\n",
		},
		{
			name: "avg divides the average, stats only the average",
			m: &Map{Name: "@s", Kind: Stats, Entries: []Entry{
				{Key: key(Str("a")), Count: 4, Total: 400},
				{Key: key(Str("b")), Count: 0, Total: 0},
			}},
			div:  3,
			want: "@s[b]: { .count = 0, .average = 0, .total = 0 }\n@s[a]: { .count = 4, .average = 33, .total = 400 }\n",
		},
		{
			name: "other values",
			m: &Map{Name: "@v", Kind: Scalar, Entries: []Entry{
				{Key: key(Int(1)), Value: Bool(true)},
				{Key: key(Int(2)), Value: Record(Field{"m", Int(2)}, Field{"n", Array(Int(1), Int(2))})},
				{Key: key(Int(3)), Value: Buffer([]byte("ok\x00\xff"))},
				{Key: key(Int(4)), Value: Pointer(0xffff0000)},
				{Key: key(Int(5)), Value: Sym("ONE", 1)},
				{Key: key(Int(6)), Value: Value{}},
				{Key: key(Int(7)), Value: Record()},
			}},
			want: "@v[1]: true\n@v[2]: { .m = 2, .n = [1,2] }\n@v[3]: ok\\x00\\xff\n@v[4]: 0xffff0000\n" +
				"@v[5]: ONE\n@v[6]: null\n@v[7]: {}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MapText(tt.m, tt.top, tt.div); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func histZeroRows(bounds ...string) string {
	var s string
	for i := 0; i+1 < len(bounds); i++ {
		s += histRow("["+bounds[i]+", "+bounds[i+1]+")", 0, 0)
	}
	return s
}

func TestMapJSON(t *testing.T) {
	tests := []struct {
		name string
		m    *Map
		want string
	}{
		{
			name: "hist with k=3",
			m:    &Map{Name: "@", Kind: Hist, HistBits: 3, Entries: []Entry{{Buckets: histOf(3, 15, 16, 17)}}},
			want: `{"type": "hist", "data": {"@": [{"min": 15, "max": 15, "count": 1},{"min": 16, "max": 17, "count": 2}]}}`,
		},
		{
			name: "hist beyond 4G",
			m:    &Map{Name: "@", Kind: Hist, Entries: []Entry{{Buckets: histOf(0, 10<<30)}}},
			want: `{"type": "hist", "data": {"@": [{"min": 8589934592, "max": 17179869183, "count": 1}]}}`,
		},
		{
			name: "hist top bucket max is not a double",
			m:    &Map{Name: "@", Kind: Hist, Entries: []Entry{{Buckets: histOf(0, 1<<62)}}},
			want: `{"type": "hist", "data": {"@": [{"min": 4611686018427387904, "max": "9223372036854775807", "count": 1}]}}`,
		},
		{
			name: "empty hist",
			m:    &Map{Name: "@hist", Kind: Hist, Entries: []Entry{{Buckets: histOf(0)}}},
			want: `{"type": "hist", "data": {"@hist": []}}`,
		},
		{
			name: "empty map",
			m:    &Map{Name: "@c", Kind: Count},
			want: ``,
		},
		{
			name: "empty stats map",
			m:    &Map{Name: "@s", Kind: Stats},
			want: `{"type": "stats", "data": {"@s": {}}}`,
		},
		{
			name: "string with control characters",
			m:    &Map{Name: "@scalar_str", Kind: Scalar, Entries: []Entry{{Value: Str("a b \n d e\x01\r")}}},
			want: `{"type": "map", "data": {"@scalar_str": "a b \n d e\u0001\r"}}`,
		},
		{
			name: "stack key",
			m: &Map{Name: "@", Kind: Count, Entries: []Entry{
				{Key: key(Stack(StackBpftrace, []Frame{{Addr: 1, Sym: "f+1"}, {Addr: 2, Sym: "g"}})), Value: Uint(1)},
			}},
			want: `{"type": "map", "data": {"@": {"\nf+1\ng\n": 1}}}`,
		},
		{
			name: "other values",
			m: &Map{Name: "@v", Kind: Scalar, Entries: []Entry{
				{Key: key(Int(1)), Value: Bool(false)},
				{Key: key(Int(2)), Value: Record(Field{"m", Int(-2)}, Field{"n", Array(Uint(1<<64 - 1))})},
				{Key: key(Int(3)), Value: Buffer([]byte("o\xff"))},
				{Key: key(Int(4)), Value: Pointer(0xffff0000)},
				{Key: key(Int(5)), Value: Sym("ONE", 1)},
				{Key: key(Int(6)), Value: Value{}},
				{Key: key(Int(7)), Value: Int(-1 << 63)},
			}},
			want: `{"type": "map", "data": {"@v": {"1": false, "2": {"m": -2, "n": ["18446744073709551615"]}, ` +
				`"3": [111,-1], "4": 4294901760, "5": 1, "6": null, "7": -9223372036854775808}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want != "" {
				want += "\n"
			}
			if got := MapJSON(tt.m, 0, 0); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestPrinterMessages(t *testing.T) {
	var out, errw bytes.Buffer
	text := NewText(&out, &errw)
	for _, err := range []error{
		text.AttachedProbes(2), text.LostEvents(3), text.Time("12:00:00\n"),
		text.Join("a b"), text.Syscall("out"), text.Cat("file\n"), text.Value(Tuple(Int(1), Str("x"))),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := "12:00:00\na b\nout\nfile\n(1, x)\n"; out.String() != want {
		t.Errorf("text out = %q, want %q", out.String(), want)
	}
	if want := "Attached 2 probes\nLost 3 events\n"; errw.String() != want {
		t.Errorf("text err = %q, want %q", errw.String(), want)
	}

	out.Reset()
	js := NewJSON(&out)
	for _, err := range []error{
		js.AttachedProbes(1), js.LostEvents(3), js.Time("12:00:00\n"), js.Join("a b"),
		js.Syscall("out\n"), js.Cat("c"), js.Printf("test \r \n \t \\ \" bar"), js.Value(Tuple(Int(1), Str("x"))), js.End(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type": "attached_probes", "count": 1, "data": {"probes": 1}}
{"type": "lost_events", "count": 3, "data": {"events": 3}}
{"type": "time", "data": "12:00:00\n"}
{"type": "join", "data": "a b"}
{"type": "syscall", "data": "out\n"}
{"type": "cat", "data": "c"}
{"type": "printf", "data": "test \r \n \t \\ \" bar"}
{"type": "value", "data": [1,"x"]}
`
	if out.String() != want {
		t.Errorf("json = \n%s\nwant\n%s", out.String(), want)
	}
}

// TestMapZero checks print() of a map without keys that has no entry: its
// Zero shows, as in bpftrace v0.26, in text and JSON; a map with an entry
// prints it; at exit an empty map prints nothing.
func TestMapZero(t *testing.T) {
	tests := []struct {
		name     string
		m        Map
		text, js string
		exitText string
	}{
		{"count", Map{Name: "@", Kind: Count, Zero: &Entry{Value: Uint(0)}},
			"@: 0\n", `{"type": "map", "data": {"@": 0}}` + "\n", "\n\n"},
		{"sum", Map{Name: "@s", Kind: Sum, Zero: &Entry{Value: Int(0)}},
			"@s: 0\n", `{"type": "map", "data": {"@s": 0}}` + "\n", "\n\n"},
		{"string", Map{Name: "@x", Kind: Scalar, Zero: &Entry{Value: Str("")}},
			"@x: \n", `{"type": "map", "data": {"@x": ""}}` + "\n", "\n\n"},
		{"stats", Map{Name: "@st", Kind: Stats, Zero: &Entry{}},
			"@st: { .count = 0, .average = 0, .total = 0 }\n",
			`{"type": "stats", "data": {"@st": {"count": 0, "average": 0, "total": 0}}}` + "\n", "\n\n"},
		{"with an entry", Map{Name: "@", Kind: Count, Zero: &Entry{Value: Uint(0)}, Entries: []Entry{{Value: Uint(3)}}},
			"@: 3\n", `{"type": "map", "data": {"@": 3}}` + "\n", "\n\n@: 3\n"},
		{"no zero", Map{Name: "@h", Kind: Hist}, "", "", "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MapText(&tt.m, 0, 0); got != tt.text {
				t.Errorf("text %q, want %q", got, tt.text)
			}
			if got := MapJSON(&tt.m, 0, 0); got != tt.js {
				t.Errorf("json %q, want %q", got, tt.js)
			}
			var b bytes.Buffer
			if err := PrintExit(NewText(&b, &b), []*Map{&tt.m}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.exitText {
				t.Errorf("at exit %q, want %q", b.String(), tt.exitText)
			}
		})
	}
}

func TestSyscallOutputNewline(t *testing.T) {
	for _, tt := range []struct{ in, text, json string }{
		{"a b c\n", "a b c\n", `{"type": "syscall", "data": "a b c\n"}` + "\n"},
		{"no newline", "no newline\n", `{"type": "syscall", "data": "no newline"}` + "\n"},
		{"", "\n", `{"type": "syscall", "data": ""}` + "\n"},
	} {
		var text, js bytes.Buffer
		if err := NewText(&text, &text).Syscall(tt.in); err != nil {
			t.Fatal(err)
		}
		if err := NewJSON(&js).Syscall(tt.in); err != nil {
			t.Fatal(err)
		}
		if text.String() != tt.text || js.String() != tt.json {
			t.Errorf("Syscall(%q): text %q, json %q; want %q, %q", tt.in, text.String(), js.String(), tt.text, tt.json)
		}
	}
}

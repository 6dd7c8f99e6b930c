package output

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// wireValues holds a value of every type, with edge cases that plain
// JSON would lose: 64-bit integers, bytes that are not UTF-8, empty
// containers.
var wireValues = []Value{
	{},
	Int(0), Int(-1), Int(math.MinInt64), Int(math.MaxInt64),
	Uint(0), Uint(math.MaxUint64), Uint(1<<53 + 1),
	Bool(true), Bool(false),
	Str(""), Str("bash"), Str("a\x00\xff\"<>&\n"), Str("é"),
	Sym("TASK_RUNNING", 0), Sym("\xfe", 7), Pointer(0xffffffff81000000),
	Buffer(nil), Buffer([]byte{0, 1, 0xff, 'a'}),
	Tuple(), Tuple(Str("x"), Int(-3), Tuple(Uint(1))),
	Array(), Array(Int(1), Int(2)),
	Record(), Record(Field{"a", Int(1)}, Field{"b\xff", Record(Field{"c", Str("d")})}),
	Stack(StackBpftrace, nil),
	Stack(StackPerf, []Frame{
		{Addr: 0xffffffff81000010, Sym: "do_sys_open+16", Func: "do_sys_open", Kernel: true},
		{Addr: 0x401000, Sym: "main+0", Func: "main", File: "/usr/bin/x\xff"},
		{Addr: UnwindFailure},
	}),
}

func TestWireValueRoundTrip(t *testing.T) {
	for _, v := range wireValues {
		data, err := json.Marshal(EncodeValue(v))
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		var w WireValue
		if err := json.Unmarshal(data, &w); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		got, err := DecodeValue(w)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(v)) {
			t.Errorf("%s: got %#v, want %#v", data, got, v)
		}
		if got.String() != v.String() || valueJSON(got) != valueJSON(v) {
			t.Errorf("%s prints as %q / %s, want %q / %s", data, got, valueJSON(got), v, valueJSON(v))
		}
		if !bytes.Equal(AppendValueKey(nil, got), AppendValueKey(nil, v)) {
			t.Errorf("%s: key changed in the round trip", data)
		}
	}
}

// normalize makes empty slices nil, which print the same.
func normalize(v Value) Value {
	if len(v.elems) == 0 {
		v.elems = nil
	}
	for i := range v.elems {
		v.elems[i] = normalize(v.elems[i])
	}
	if len(v.fields) == 0 {
		v.fields = nil
	}
	for i := range v.fields {
		v.fields[i].Value = normalize(v.fields[i].Value)
	}
	if len(v.frames) == 0 {
		v.frames = nil
	}
	return v
}

func valueJSON(v Value) string {
	var b bytes.Buffer
	NewJSON(&b).Value(v)
	return b.String()
}

func TestAppendValueKeyDistinct(t *testing.T) {
	seen := map[string]Value{}
	for _, v := range append(wireValues,
		Tuple(Str("ab"), Str("c")), Tuple(Str("a"), Str("bc")),
		Str("1"), Buffer([]byte("1")), Array(Int(-3)), Tuple(Int(-3)), Int(1), Uint(1), Sym("", 1)) {
		k := string(AppendValueKey(nil, v))
		if prev, dup := seen[k]; dup && !reflect.DeepEqual(normalize(prev), normalize(v)) {
			t.Errorf("%#v and %#v have the same key", prev, v)
		}
		seen[k] = v
	}
}

func TestDecodeValueErrors(t *testing.T) {
	for _, in := range []string{
		`{"int": 1, "uint": 2}`,
		`{"tuple": [], "array": []}`,
		`{"tuple": [{"str": "a", "bool": true}]}`,
		`{"stack": {"mode": 9, "frames": []}}`,
	} {
		var w WireValue
		if err := json.Unmarshal([]byte(in), &w); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if _, err := DecodeValue(w); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestIntAccessors(t *testing.T) {
	if n, ok := Int(-5).Int64(); !ok || n != -5 {
		t.Errorf("Int(-5).Int64() = %d, %v", n, ok)
	}
	if n, ok := Uint(5).Uint64(); !ok || n != 5 {
		t.Errorf("Uint(5).Uint64() = %d, %v", n, ok)
	}
	if _, ok := Uint(5).Int64(); ok {
		t.Errorf("a Uint is an Int64")
	}
	if _, ok := Int(5).Uint64(); ok {
		t.Errorf("an Int is a Uint64")
	}
}

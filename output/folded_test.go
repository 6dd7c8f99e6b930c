package output

import (
	"strings"
	"testing"
)

// Stacks of the tests, leaf first as the runtime gives them.
var (
	userStack = Stack(StackBpftrace, []Frame{
		{Addr: 0x401126, Sym: "hot+6", Func: "hot", File: "/bin/loop"},
		{Addr: 0x401160, Sym: "main+37", Func: "main", File: "/bin/loop"},
	})
	kernelStack = Stack(StackBpftrace, []Frame{
		{Addr: 0xffffffff81001000, Sym: "ksys_read+5", Func: "ksys_read", Kernel: true},
		{Addr: 0xffffffff81002000, Sym: "do_syscall_64+80", Func: "do_syscall_64", Kernel: true},
	})
	emptyStack = Stack(StackBpftrace, nil)
)

func TestFoldedLines(t *testing.T) {
	tests := []struct {
		name string
		m    *Map
		want string
	}{
		{"kernel", &Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(kernelStack), Value: Uint(3)}}},
			"do_syscall_64;ksys_read 3\n"},
		{"user", &Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(userStack), Value: Uint(7)}}},
			"main;hot 7\n"},
		{"user then kernel, whatever the key's order",
			&Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(kernelStack, userStack), Value: Uint(2)}}},
			"main;hot;-;do_syscall_64;ksys_read 2\n"},
		{"string and integer keys make one root frame",
			&Map{Name: "@", Kind: Sum, Entries: []Entry{{Key: key(Str("loop"), Int(42), userStack), Value: Int(100)}}},
			"loop-42;main;hot 100\n"},
		{"an empty stack adds nothing",
			&Map{Name: "@", Kind: Count, Entries: []Entry{
				{Key: key(Str("idle"), emptyStack), Value: Uint(5)},
				{Key: key(Str("loop"), userStack, emptyStack), Value: Uint(6)},
			}},
			"idle 5\nloop;main;hot 6\n"},
		{"nothing but an empty stack", &Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(emptyStack), Value: Uint(1)}}},
			"[no stack] 1\n"},
		{"unsymbolized addresses by their hex",
			&Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(Stack(StackRaw, []Frame{
				{Addr: 0x7f00, Func: "0x7f00"}, {Addr: 0x401160, Func: "main"}})), Value: Uint(1)}}},
			"main;0x7f00 1\n"},
		{"keys that fold alike add up, smallest first",
			&Map{Name: "@", Kind: Count, Entries: []Entry{
				{Key: key(Stack(StackBpftrace, []Frame{{Addr: 1, Sym: "f+1", Func: "f"}})), Value: Uint(2)},
				{Key: key(Stack(StackBpftrace, []Frame{{Addr: 2, Sym: "f+2", Func: "f"}})), Value: Uint(3)},
				{Key: key(Stack(StackBpftrace, []Frame{{Addr: 3, Sym: "g+2", Func: "g"}})), Value: Uint(4)},
			}},
			"g 4\nf 5\n"},
		{"an unwind failure roots what was unwound",
			&Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(Stack(StackBpftrace, []Frame{
				{Addr: 1, Func: "f"}, {Addr: UnwindFailure}, {Addr: 2, Func: "never"}})), Value: Uint(1)}}},
			"[unwind failure];f 1\n"},
		{"names keep the line whole",
			&Map{Name: "@", Kind: Count, Entries: []Entry{{Key: key(Str("a;b\nc"), userStack), Value: Uint(1)}}},
			"a:b c;main;hot 1\n"},
		{"integer values", &Map{Name: "@", Kind: Scalar, Entries: []Entry{{Key: key(userStack), Value: Int(-2)}}},
			"main;hot -2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := NewFolded(&b, nil).Map(tt.m, 0, 0); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFoldedRefuses(t *testing.T) {
	tests := []struct {
		m    *Map
		want string
	}{
		{&Map{Name: "@h", Kind: Hist, Entries: []Entry{{Key: key(userStack), Buckets: []uint64{1}}}}, "map @h: its hist() values"},
		{&Map{Name: "@a", Kind: Avg, Entries: []Entry{{Key: key(userStack), Count: 1, Total: 2}}}, "map @a: its avg() values"},
		{&Map{Name: "@s", Kind: Scalar, Entries: []Entry{{Key: key(userStack), Value: Str("x")}}}, "map @s: its values are not integers"},
	}
	for _, tt := range tests {
		err := NewFolded(&strings.Builder{}, nil).Map(tt.m, 0, 0)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.m.Name, err, tt.want)
		}
	}
}

func TestFoldedPrinter(t *testing.T) {
	var b strings.Builder
	p := NewFolded(&b, nil)
	stacks := &Map{Name: "@", Kind: Count, Entries: []Entry{
		{Key: key(userStack), Value: Uint(9)},
		{Key: key(kernelStack), Value: Uint(1)},
		{Key: key(Stack(StackBpftrace, []Frame{{Addr: 1, Func: "f"}})), Value: Uint(4)},
	}}
	plain := &Map{Name: "@n", Kind: Count, Entries: []Entry{{Key: key(Int(1)), Value: Uint(2)}}}
	for _, err := range []error{p.End(), p.Map(plain, 0, 0), p.Map(stacks, 2, 2)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Nothing at the end of tracing; a map without a stack as text;
	// top and div act on the lines.
	want := "@n[1]: 2\nf 2\nmain;hot 4\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStackRecorder(t *testing.T) {
	r := NewStackRecorder(NewText(&strings.Builder{}, nil))
	full := &Map{Name: "@b", Kind: Count, KeyNames: []string{"comm", ""}, Entries: []Entry{{Key: key(Str("x"), userStack), Value: Uint(1)}}}
	emptied := &Map{Name: "@b", Kind: Count}
	other := &Map{Name: "@a", Kind: Count, Entries: []Entry{{Key: key(kernelStack), Value: Uint(2)}}}
	plain := &Map{Name: "@n", Kind: Count, Entries: []Entry{{Key: key(Int(1)), Value: Uint(2)}}}
	for _, m := range []*Map{full, emptied, other, plain} {
		if err := r.Map(m, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	maps := r.Maps()
	if len(maps) != 2 || maps[0].Name != "@a" || maps[1].Name != "@b" {
		t.Fatalf("got %+v, want @a and @b", maps)
	}
	// @b as last printed with entries, its key's name kept.
	s := maps[1].Samples[0]
	if len(s.Keys) != 1 || s.KeyNames[0] != "comm" || len(s.Frames) != 2 || s.Frames[0].Func != "main" {
		t.Errorf("got %+v", s)
	}
}

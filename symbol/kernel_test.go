package symbol

import (
	"gtrace/internal/testutils"

	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const sampleKallsyms = `0000000000000000 A fixed_percpu_data
0000000000001000 D cpu_number
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000100 t do_one_initcall
ffffffff81000200 T vfs_read
ffffffff81000300 T vfs_write
ffffffff82000000 D jiffies
ffffffff82000100 R rodata_thing
ffffffffc0201000 t ftrace_trampoline	[__builtin__ftrace]
ffffffffc0300000 t ext4_fill_super	[ext4]
ffffffffc0300000 d ext4_data	[ext4]
`

func sampleKernel(t *testing.T) *Kernel {
	t.Helper()
	var k Kernel
	k.once.Do(func() {
		k.syms, k.addrs, k.err = parseKallsyms(sampleKallsyms)
	})
	if k.err != nil {
		t.Fatal(k.err)
	}
	return &k
}

func TestResolve(t *testing.T) {
	k := sampleKernel(t)
	tests := []struct {
		addr   uint64
		name   string
		offset uint64
		ok     bool
	}{
		{0xffffffff80000000, "", 0, false},
		{0x1000, "", 0, false}, // per-CPU offsets are not code
		{0xffffffff81000000, "_stext", 0, true},
		{0xffffffff810000ff, "_stext", 0xff, true},
		{0xffffffff81000100, "do_one_initcall", 0, true},
		{0xffffffff81000223, "vfs_read", 0x23, true},
		{0xffffffff81000300, "vfs_write", 0, true},
		// Data symbols are skipped, like bcc does.
		{0xffffffff82000108, "vfs_write", 0xfffe08, true},
		{0xffffffffc0201010, "ftrace_trampoline", 0x10, true},
		{0xffffffffc0300004, "ext4_fill_super", 4, true},
	}
	for _, tt := range tests {
		name, off, ok := k.Resolve(tt.addr)
		if name != tt.name || off != tt.offset || ok != tt.ok {
			t.Errorf("Resolve(%#x) = %q, %#x, %v; want %q, %#x, %v", tt.addr, name, off, ok, tt.name, tt.offset, tt.ok)
		}
	}
}

func TestAddr(t *testing.T) {
	k := sampleKernel(t)
	tests := []struct {
		name string
		addr uint64
		ok   bool
	}{
		{"vfs_read", 0xffffffff81000200, true},
		{"jiffies", 0xffffffff82000000, true},
		{"ext4_fill_super", 0xffffffffc0300000, true},
		{"cpu_number", 0x1000, true},
		{"[ext4]", 0, false},
		{"nosuch", 0, false},
	}
	for _, tt := range tests {
		addr, ok := k.Addr(tt.name)
		if addr != tt.addr || ok != tt.ok {
			t.Errorf("Addr(%q) = %#x, %v; want %#x, %v", tt.name, addr, ok, tt.addr, tt.ok)
		}
	}
}

func TestParseKallsymsErrors(t *testing.T) {
	hidden := "0000000000000000 T _stext\n0000000000000000 T vfs_read\n"
	if _, _, err := parseKallsyms(hidden); !errors.Is(err, errHiddenAddrs) {
		t.Errorf("parseKallsyms(zeros) error = %v, want errHiddenAddrs", err)
	}
	if _, _, err := parseKallsyms("zzzz T foo\n"); err == nil {
		t.Error("parseKallsyms(bad address) succeeded")
	}
}

func TestFormat(t *testing.T) {
	k := sampleKernel(t)
	const vfsRead = 0xffffffff81000210
	if got := k.Sym(vfsRead); got != "vfs_read" {
		t.Errorf("Sym = %q, want vfs_read", got)
	}
	if got := k.Sym(0x10); got != "0x10" {
		t.Errorf("Sym(unknown) = %q, want 0x10", got)
	}
	if got := k.SymOffset(vfsRead); got != "vfs_read+16" {
		t.Errorf("SymOffset = %q, want vfs_read+16", got)
	}

}

// TestKallsymsLive resolves symbols of the running kernel both ways.
func TestKallsymsLive(t *testing.T) {
	testutils.RequireRoot(t)
	want := liveAddr(t, "vfs_read")

	var k Kernel
	start := time.Now()
	if err := k.Load(); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d code symbols in %v", len(k.syms), time.Since(start))

	addr, ok := k.Addr("vfs_read")
	if !ok || addr != want {
		t.Fatalf("Addr(vfs_read) = %#x, %v; kallsyms says %#x", addr, ok, want)
	}
	for _, off := range []uint64{0, 1, 0x10} {
		name, gotOff, ok := k.Resolve(want + off)
		if !ok || name != "vfs_read" || gotOff != off {
			t.Errorf("Resolve(vfs_read+%d) = %q, %d, %v", off, name, gotOff, ok)
		}
	}
	if got := k.SymOffset(want + 5); got != "vfs_read+5" {
		t.Errorf("SymOffset(vfs_read+5) = %q", got)
	}
}

// liveAddr finds name in /proc/kallsyms the plain way.
func liveAddr(t *testing.T, name string) uint64 {
	t.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && fields[2] == name {
			addr, err := strconv.ParseUint(fields[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			if addr == 0 {
				t.Fatal("/proc/kallsyms shows zero addresses even though we are root")
			}
			return addr
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s is not in /proc/kallsyms", name)
	return 0
}

func BenchmarkLoad(b *testing.B) {
	testutils.RequireRoot(b) // to see kallsyms addresses
	for b.Loop() {
		var k Kernel
		if err := k.Load(); err != nil {
			b.Fatal(err)
		}
	}
}

package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"gtrace/internal/testutils"
)

func TestParseUSDTArgs(t *testing.T) {
	tests := []struct {
		spec string
		want []USDTArg
	}{
		{"", nil},
		{"-4@%edi", []USDTArg{{Kind: USDTReg, Size: 4, Signed: true, Reg: "edi"}}},
		{"8@%rax 1@%r8b -2@%dx", []USDTArg{
			{Kind: USDTReg, Size: 8, Reg: "rax"},
			{Kind: USDTReg, Size: 1, Reg: "r8b"},
			{Kind: USDTReg, Size: 2, Signed: true, Reg: "dx"},
		}},
		{"-4@$-7 8@$0x10 1@$255", []USDTArg{
			{Kind: USDTConst, Size: 4, Signed: true, Value: -7},
			{Kind: USDTConst, Size: 8, Value: 16},
			{Kind: USDTConst, Size: 1, Value: 255},
		}},
		{"8@-16(%rbp)", []USDTArg{{Kind: USDTMem, Size: 8, Value: -16, Reg: "rbp"}}},
		{"-8@(%r9)  -2@12(%r9)", []USDTArg{
			{Kind: USDTMem, Size: 8, Signed: true, Reg: "r9"},
			{Kind: USDTMem, Size: 2, Signed: true, Value: 12, Reg: "r9"},
		}},
		{"4@8(%rax,%rdx,4) 2@(%rbx,%rcx)", []USDTArg{
			{Kind: USDTMem, Size: 4, Value: 8, Reg: "rax", Index: "rdx", Scale: 4},
			{Kind: USDTMem, Size: 2, Reg: "rbx", Index: "rcx", Scale: 1},
		}},
		{"-8@counter(%rip) 4@tab+8(%rip) 4@x.0-4(%rip)", []USDTArg{
			{Kind: USDTMem, Size: 8, Signed: true, Symbol: "counter", Reg: "rip"},
			{Kind: USDTMem, Size: 4, Symbol: "tab", Value: 8, Reg: "rip"},
			{Kind: USDTMem, Size: 4, Symbol: "x.0", Value: -4, Reg: "rip"},
		}},
		{"%rsi", []USDTArg{{Kind: USDTReg, Size: 8, Reg: "rsi"}}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseUSDTArgs(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseUSDTArgs(%q) =\n%+v\nwant\n%+v", tt.spec, got, tt.want)
			}
		})
	}
}

func TestParseUSDTArgsErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"3@%eax", `usdt argument 0 "3@%eax": invalid size 3`},
		{"x@%eax", `usdt argument 0 "x@%eax": invalid size "x"`},
		{"4@%eax 4@$x", `usdt argument 1 "4@$x": invalid constant "x"`},
		{"4@%", `usdt argument 0 "4@%": invalid register "%"`},
		{"4@eax", `usdt argument 0 "4@eax": unsupported operand`},
		{"4@8(%rax,%rdx,3)", `usdt argument 0 "4@8(%rax,%rdx,3)": invalid scale in (%rax,%rdx,3)`},
		{"4@8(,%rdx,4)", `usdt argument 0 "4@8(,%rdx,4)": unsupported address (,%rdx,4)`},
		{"4@1+(%rax)", `usdt argument 0 "4@1+(%rax)": unsupported displacement "1+"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ParseUSDTArgs(tt.spec)
			if err == nil || err.Error() != tt.want {
				t.Errorf("ParseUSDTArgs(%q) error %v, want %q", tt.spec, err, tt.want)
			}
		})
	}
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// stapsdtNote builds a stapsdt note as <sys/sdt.h> writes it.
func stapsdtNote(order byteOrder, addrSize int, addrs [3]uint64, strs ...string) []byte {
	var desc bytes.Buffer
	for _, a := range addrs {
		if addrSize == 4 {
			desc.Write(order.AppendUint32(nil, uint32(a)))
		} else {
			desc.Write(order.AppendUint64(nil, a))
		}
	}
	for _, s := range strs {
		desc.WriteString(s + "\x00")
	}
	var b bytes.Buffer
	b.Write(order.AppendUint32(nil, 8)) // "stapsdt\0"
	b.Write(order.AppendUint32(nil, uint32(desc.Len())))
	b.Write(order.AppendUint32(nil, ntStapsdt))
	b.WriteString("stapsdt\x00")
	b.Write(desc.Bytes())
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

func TestStapsdtNotes(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	tests := []struct {
		name     string
		order    byteOrder
		addrSize int
		note     []byte
		want     USDT
	}{
		{"x86_64", le, 8,
			stapsdtNote(le, 8, [3]uint64{0x1174, 0x2037, 0}, "gtest", "args", "-4@-4(%rbp) 8@%rax"),
			USDT{Provider: "gtest", Name: "args", Location: 0x1174, Base: 0x2037, Args: "-4@-4(%rbp) 8@%rax"}},
		{"semaphore", le, 8,
			stapsdtNote(le, 8, [3]uint64{0x12b3, 0x2037, 0x4028}, "gtest", "guarded", "-4@%ebx"),
			USDT{Provider: "gtest", Name: "guarded", Location: 0x12b3, Base: 0x2037, Semaphore: 0x4028, Args: "-4@%ebx"}},
		{"no arguments", le, 8,
			stapsdtNote(le, 8, [3]uint64{0x10, 0x20, 0}, "p", "n", ""),
			USDT{Provider: "p", Name: "n", Location: 0x10, Base: 0x20}},
		{"32-bit big endian", be, 4,
			stapsdtNote(be, 4, [3]uint64{0x8000, 0x9000, 0xa000}, "prov", "probe", "4@%r3"),
			USDT{Provider: "prov", Name: "probe", Location: 0x8000, Base: 0x9000, Semaphore: 0xa000, Args: "4@%r3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A note of another owner before ours is skipped.
			other := []byte{4, 0, 0, 0, 4, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 3, 4}
			if tt.order == be {
				other = []byte{0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 3, 'G', 'N', 'U', 0, 1, 2, 3, 4}
			}
			data := append(other, tt.note...)
			n, rest, err := nextNote(data, tt.order)
			if err != nil || n.name != "GNU" || len(rest) != len(tt.note) {
				t.Fatalf("first note: %+v, %d bytes left, %v", n, len(rest), err)
			}
			n, rest, err = nextNote(rest, tt.order)
			if err != nil || n.name != "stapsdt" || n.typ != ntStapsdt || len(rest) != 0 {
				t.Fatalf("second note: %+v, %d bytes left, %v", n, len(rest), err)
			}
			got, err := parseStapsdt(n.desc, tt.addrSize, tt.order)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStapsdtNoteErrors(t *testing.T) {
	le := binary.LittleEndian
	good := stapsdtNote(le, 8, [3]uint64{1, 2, 3}, "p", "n", "")
	if _, _, err := nextNote(good[:10], le); err == nil {
		t.Error("nextNote accepted a truncated header")
	}
	if _, _, err := nextNote(good[:len(good)-4], le); err == nil {
		t.Error("nextNote accepted a truncated note")
	}
	if _, err := parseStapsdt(make([]byte, 20), 8, le); err == nil {
		t.Error("parseStapsdt accepted a descriptor shorter than its addresses")
	}
	if _, err := parseStapsdt(make([]byte, 30), 8, le); err == nil {
		t.Error("parseStapsdt accepted a note without provider and name")
	}
}

func TestAdjustPrelink(t *testing.T) {
	tests := []struct {
		name    string
		in      USDT
		sdtBase uint64
		want    USDT
	}{
		{"not prelinked", USDT{Location: 0x1000, Base: 0x2000, Semaphore: 0x4000}, 0x2000,
			USDT{Location: 0x1000, Base: 0x2000, Semaphore: 0x4000}},
		{"moved up", USDT{Location: 0x1000, Base: 0x2000, Semaphore: 0x4000}, 0x402000,
			USDT{Location: 0x401000, Base: 0x2000, Semaphore: 0x404000}},
		{"moved down, no semaphore", USDT{Location: 0x401000, Base: 0x402000}, 0x2000,
			USDT{Location: 0x1000, Base: 0x402000}},
		{"no .stapsdt.base", USDT{Location: 0x1000, Base: 0x2000}, 0,
			USDT{Location: 0x1000, Base: 0x2000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.in
			u.adjustPrelink(tt.sdtBase)
			if !reflect.DeepEqual(u, tt.want) {
				t.Errorf("got %+v, want %+v", u, tt.want)
			}
		})
	}
}

// usdtProgram is C with USDT probes: in main.c without semaphores, one of
// them inlined in two places, and in sema.c with one.
var usdtProgram = map[string]string{
	"main.c": `#include <sys/sdt.h>
long counter = 5;
void guarded(int i);
__attribute__((noinline)) void work(int i, long v, long *p) {
	DTRACE_PROBE3(gtest, args, i, v, p[1]);
	DTRACE_PROBE1(gtest, glob, counter);
}
static inline __attribute__((always_inline)) void twice(int i) { DTRACE_PROBE1(gtest, twice, i); }
int main(int argc, char **argv) {
	long a[2] = {argc, 2 * argc};
	work(argc, argc * 3L, a);
	twice(argc);
	twice(argc * 10);
	guarded(argc);
	return 0;
}
`,
	"sema.c": `#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
__extension__ unsigned short gtest_guarded_semaphore __attribute__((unused)) __attribute__((section(".probes")));
void guarded(int i) {
	if (gtest_guarded_semaphore)
		DTRACE_PROBE1(gtest, guarded, i);
}
`,
}

// buildUSDT compiles usdtProgram with gcc at the given optimization level.
func buildUSDT(t *testing.T, opt string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testutils.Skip(t, "gcc is not installed")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		if _, err := os.Stat("/usr/include/sys/sdt.h"); err != nil {
			testutils.Skip(t, "<sys/sdt.h> is not installed (Debian: systemtap-sdt-dev)")
		}
	}
	dir := t.TempDir()
	var srcs []string
	for name, src := range usdtProgram {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, p)
	}
	bin := filepath.Join(dir, "prog")
	out, err := exec.Command("gcc", append([]string{opt, "-o", bin}, srcs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func TestUSDTProbesOfBinary(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			bin := buildUSDT(t, opt)
			probes, err := USDTProbes(bin)
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			raw, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			syms, err := f.Symbols()
			if err != nil {
				t.Fatal(err)
			}

			count := map[string]int{}
			for _, p := range probes {
				count[p.Provider+":"+p.Name]++
				if p.ArgsErr != nil {
					t.Errorf("%s: %v", p.Name, p.ArgsErr)
				}
				// A probe site is a nop instruction.
				if raw[p.LocationOffset] != 0x90 {
					t.Errorf("%s: byte at file offset %#x is %#x, not a nop", p.Name, p.LocationOffset, raw[p.LocationOffset])
				}
				wantArgs := map[string]int{"args": 3, "glob": 1, "twice": 1, "guarded": 1}[p.Name]
				if len(p.Arguments) != wantArgs {
					t.Errorf("%s: %d arguments (%q), want %d", p.Name, len(p.Arguments), p.Args, wantArgs)
				}
				if p.Name != "guarded" {
					if p.Semaphore != 0 || p.SemaphoreOffset != 0 {
						t.Errorf("%s: semaphore %#x at %#x, want none", p.Name, p.Semaphore, p.SemaphoreOffset)
					}
					continue
				}
				sem, ok := symbolValue(syms, "gtest_guarded_semaphore")
				if !ok || p.Semaphore != sem {
					t.Errorf("semaphore at %#x, want the symbol's %#x", p.Semaphore, sem)
				}
				probesSec := f.Section(".probes")
				if want := sem - probesSec.Addr + probesSec.Offset; p.SemaphoreOffset != want {
					t.Errorf("semaphore file offset %#x, want %#x", p.SemaphoreOffset, want)
				}
			}
			want := map[string]int{"gtest:args": 1, "gtest:glob": 1, "gtest:twice": 2, "gtest:guarded": 1}
			if !reflect.DeepEqual(count, want) {
				t.Errorf("probes %v, want %v", count, want)
			}
		})
	}
}

// TestUSDTRIPRelative checks that a global read relative to %rip, as gcc
// -O2 writes it, becomes an offset from the probe's address.
func TestUSDTRIPRelative(t *testing.T) {
	bin := buildUSDT(t, "-O2")
	probes, err := USDTProbes(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	counter, _ := symbolValue(syms, "counter")
	for _, p := range probes {
		if p.Name != "glob" {
			continue
		}
		if p.Args != "-8@counter(%rip)" {
			testutils.Skip(t, fmt.Sprintf("gcc wrote %q, not a %%rip-relative operand", p.Args))
		}
		want := USDTArg{Kind: USDTMem, Size: 8, Signed: true, Reg: "rip", Value: int64(counter - p.Location)}
		if len(p.Arguments) != 1 || p.Arguments[0] != want {
			t.Errorf("arguments %+v, want %+v", p.Arguments, want)
		}
		return
	}
	t.Fatal("no probe gtest:glob")
}

func TestUSDTProbesNone(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	probes, err := USDTProbes(exe)
	if err != nil || len(probes) != 0 {
		t.Errorf("USDTProbes(test binary) = %v, %v; want none", probes, err)
	}
	if _, err := USDTProbes("/nonexistent"); err == nil {
		t.Error("USDTProbes of a missing file succeeded")
	}
}

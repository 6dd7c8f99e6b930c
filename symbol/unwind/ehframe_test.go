package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// nofpProgram calls funcA to funcD; realign needs its stack aligned to
// 64 bytes, which gcc does through rbp, with a CFA expression.
const nofpProgram = `
#include <unistd.h>
volatile int sink;
__attribute__((noinline)) void funcD(void) { sink = 42; }
__attribute__((noinline)) void funcC(void) { funcD(); sink; }
__attribute__((noinline)) void funcB(void) { funcC(); sink; }
__attribute__((noinline)) void funcA(void) { funcB(); sink; }
__attribute__((noinline)) void use(int *p) { sink = *p; }
__attribute__((noinline)) void realign(void) {
	int x[16] __attribute__((aligned(64)));
	x[0] = sink;
	use(x);
}
int main(void) {
#ifdef WAIT
	char c;
	read(0, &c, 1);
#endif
	funcA();
	realign();
	return 0;
}
`

// build compiles nofpProgram with gcc and the given flags.
func build(t *testing.T, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		testutils.Skip(t, "gcc is not installed; it builds the programs the unwind tables are read from")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "nofp.c"), filepath.Join(dir, "nofp")
	if err := os.WriteFile(src, []byte(nofpProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, flags...), "-o", bin, src)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

func fileRows(t *testing.T, path string) ([]Row, *elf.File) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	rows, err := FileRows(f)
	if err != nil {
		t.Fatalf("FileRows(%s): %v", path, err)
	}
	return rows, f
}

func symbolAddr(t *testing.T, f *elf.File, name string) uint64 {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}

// TestFileRows checks the rows at the entry of functions, and that the
// rows agree with readelf's reading of the same .eh_frame.
func TestFileRows(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		// entry is the row at function fn's entry; inside is one that
		// follows it.
		fn     string
		entry  Row
		inside Row
	}{
		{name: "no frame pointer", flags: []string{"-O2", "-fomit-frame-pointer", "-fasynchronous-unwind-tables", "-fno-optimize-sibling-calls"},
			fn: "realign", entry: Row{Kind: RSP, CFAOffset: 8}, inside: Row{Kind: RBP, CFAOffset: 16, RBPOffset: -16}},
		{name: "frame pointer", flags: []string{"-O0", "-fno-omit-frame-pointer"},
			fn: "funcC", entry: Row{Kind: RSP, CFAOffset: 8}, inside: Row{Kind: RBP, CFAOffset: 16, RBPOffset: -16}},
		{name: "pie", flags: []string{"-O1", "-fpie", "-pie", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"},
			fn: "funcB", entry: Row{Kind: RSP, CFAOffset: 8}, inside: Row{Kind: RSP, CFAOffset: 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := build(t, tt.flags...)
			rows, f := fileRows(t, bin)
			addr := symbolAddr(t, f, tt.fn)
			got, ok := Lookup(rows, addr)
			if !ok || !got.same(tt.entry) {
				t.Errorf("row at %s's entry %#x = %+v, %v; want %+v", tt.fn, addr, got, ok, tt.entry)
			}
			if !hasRow(rows, addr, tt.inside) {
				t.Errorf("no row like %+v after %s's entry in %+v", tt.inside, tt.fn, rows)
			}
			compareReadelf(t, bin, rows)
		})
	}
}

// TestLibc compares the rows of the C library with readelf's.
func TestLibc(t *testing.T) {
	bin := build(t, "-O2")
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		testutils.Skip(t, "ldd: "+err.Error())
	}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) >= 3 && strings.HasPrefix(f[0], "libc.so") {
			rows, _ := fileRows(t, f[2])
			if len(rows) < 1000 {
				t.Errorf("%s: only %d rows", f[2], len(rows))
			}
			compareReadelf(t, f[2], rows)
			return
		}
	}
	testutils.Skip(t, "no libc.so in ldd's output")
}

// hasRow says whether a row unwinding like want follows addr in rows.
func hasRow(rows []Row, addr uint64, want Row) bool {
	for _, r := range rows {
		if r.Addr > addr && r.same(want) {
			return true
		}
	}
	return false
}

// compareReadelf checks each row readelf --debug-dump=frames-interp
// prints against the row Lookup finds at its address. CFA expressions
// are left out: readelf prints them as "exp".
func compareReadelf(t *testing.T, bin string, rows []Row) {
	t.Helper()
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Log("readelf is not installed: rows not compared")
		return
	}
	// readelf exits 1 over what it cannot follow, such as a separate
	// debug file, and still prints the frames.
	out, err := exec.Command("readelf", "--debug-dump=frames-interp", bin).Output()
	if len(out) == 0 {
		t.Fatalf("readelf: %v", err)
	}
	var cols []string
	inFDE, compared := false, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 0:
			cols = nil
		case len(f) >= 4 && f[3] == "FDE":
			inFDE = true
		case len(f) >= 4 && f[3] == "CIE":
			inFDE = false
		case f[0] == "LOC":
			cols = f
		case inFDE && cols != nil && len(f) == len(cols):
			addr, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatalf("readelf row %q: %v", sc.Text(), err)
			}
			want, ok := readelfRow(cols, f)
			if !ok {
				continue
			}
			got, _ := Lookup(rows, addr)
			if !got.same(want) {
				t.Errorf("%s: row at %#x = %+v, readelf says %+v (%s)", bin, addr, got, want, sc.Text())
			}
			compared++
		}
	}
	if compared == 0 {
		t.Errorf("%s: no rows compared with readelf", bin)
	}
}

// readelfRow is what a readelf row means as a Row; false for one with
// a CFA expression.
func readelfRow(cols, f []string) (Row, bool) {
	r := Row{}
	val := map[string]string{}
	for i, c := range cols {
		val[c] = f[i]
	}
	if val["ra"] != "c-8" {
		return r, true
	}
	switch rbp := val["rbp"]; {
	case rbp == "" || rbp == "u" || rbp == "s":
	case strings.HasPrefix(rbp, "c"):
		n, _ := strconv.Atoi(rbp[1:])
		r.RBPOffset = int32(n)
	default:
		return r, true
	}
	cfa := val["CFA"]
	if cfa == "exp" {
		return r, false
	}
	reg, off, _ := strings.Cut(cfa, "+")
	n, _ := strconv.Atoi(off)
	switch reg {
	case "rsp":
		r.Kind = RSP
	case "rbp":
		r.Kind = RBP
	default:
		return r, true
	}
	r.CFAOffset = int32(n)
	return r, true
}

// TestDerefRBP checks the CFA expression of a function that realigns its
// stack, and that other expressions are not taken for it.
func TestDerefRBP(t *testing.T) {
	tests := []struct {
		expr []byte
		off  int64
		ok   bool
	}{
		{[]byte{0x76, 0x78, 0x06}, -8, true},
		{[]byte{0x76, 0x00, 0x06}, 0, true},
		{[]byte{0x77, 0x78, 0x06}, 0, false},             // rsp
		{[]byte{0x76, 0x78}, 0, false},                   // no deref
		{[]byte{0x76, 0x78, 0x23, 0x08, 0x06}, 0, false}, // more
	}
	for _, tt := range tests {
		off, ok := derefRBP(tt.expr)
		if off != tt.off && tt.ok || ok != tt.ok {
			t.Errorf("derefRBP(% x) = %d, %v; want %d, %v", tt.expr, off, ok, tt.off, tt.ok)
		}
	}
}

// TestCorrupt reads a real .eh_frame cut short and with bytes changed:
// errors or fewer rows, never a panic.
func TestCorrupt(t *testing.T) {
	bin := build(t, "-O2")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(data) {
		parseEhFrame(data[:n], sec.Addr)
	}
	for i := range data {
		for _, b := range []byte{0x00, 0x7f, 0xff} {
			bad := bytes.Clone(data)
			bad[i] = b
			if fdes, err := parseEhFrame(bad, sec.Addr); err == nil {
				merge(fdes)
			}
		}
	}
}

package symbol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inlineC calls outer, which inlines middle, which inlines inner; the
// marker label's address is inside all three.
const inlineC = `static volatile int sink;
__attribute__((always_inline)) static inline void inner(int x)
{
  sink = x;
  __asm__ volatile("marker: nop");
}
__attribute__((always_inline)) static inline void middle(int x)
{
  inner(x + 1);
}
__attribute__((noinline)) void outer(int x)
{
  middle(x);
}
int main(void) { outer(1); return 0; }
`

func TestLinesInlined(t *testing.T) {
	dir := t.TempDir()
	requireTool(t, "gcc")
	if err := os.WriteFile(filepath.Join(dir, "inline.c"), []byte(inlineC), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "inline")
	compile(t, dir, "gcc", "-g", "-O1", "-o", bin, "inline.c")
	addr := functionAddress(t, bin, "marker")

	info, ok := Lines(bin, addr)
	if !ok {
		t.Fatalf("no line information for %#x", addr)
	}
	var names []string
	for _, in := range info.Inlined {
		names = append(names, in.Name)
	}
	if got, want := strings.Join(names, ","), "inner,middle"; got != want {
		t.Errorf("inlined %s, want %s", got, want)
	}
	// inner's place is the address's line; middle's is where it calls
	// inner; outer's where it calls middle.
	wantLines := []int{5, 9}
	for i, in := range info.Inlined {
		if i < len(wantLines) && (in.At.Line != wantLines[i] || !strings.HasSuffix(in.At.File, "inline.c")) {
			t.Errorf("%s at %s:%d, want inline.c:%d", in.Name, in.At.File, in.At.Line, wantLines[i])
		}
	}
	if info.At.Line != 13 || !strings.HasSuffix(info.At.File, "/inline.c") {
		t.Errorf("outer at %s:%d, want inline.c:13", info.At.File, info.At.Line)
	}

	if _, ok := Lines(bin, 1); ok {
		t.Errorf("line information for address 1")
	}
}

func TestELFSymbol(t *testing.T) {
	dir := t.TempDir()
	bin := buildDwarf(t, dir, "prog", "-no-pie")
	addr := functionAddress(t, bin, "count")
	tests := []struct {
		addr   uint64
		name   string
		offset uint64
		ok     bool
	}{
		{addr, "count", 0, true},
		{addr + 3, "count", 3, true},
		{0x10, "", 0, false},
		{1 << 60, "", 0, false},
	}
	for _, tt := range tests {
		name, off, ok := ELFSymbol(bin, tt.addr)
		if name != tt.name || off != tt.offset || ok != tt.ok {
			t.Errorf("ELFSymbol(%#x) = %q, %d, %v; want %q, %d, %v", tt.addr, name, off, ok, tt.name, tt.offset, tt.ok)
		}
	}
}

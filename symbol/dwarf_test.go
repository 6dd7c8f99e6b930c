package symbol

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// dwarfC has parameters of several kinds, a struct with a string, an
// array and a bitfield, and a function whose first line is known.
const dwarfC = `struct Foo { int a; char b[10]; int c[3]; unsigned f : 3, g : 5; struct Foo *next; };
union U { int i; char c; };
typedef struct Foo foo_t;
int count(int *n, char c) { return *n + c; }
struct Foo *pick(struct Foo *foo, const char *name, union U *u, foo_t *t)
{
  return foo;
}
int main(void) { int n = 1; struct Foo f = {0}; union U u; count(&n, 'x'); pick(&f, "x", &u, &f); return 0; }
`

// pickLine is the line of pick's opening brace in dwarfC.
const pickLine = 6

// buildDwarf compiles dwarfC with flags into dir/name.
func buildDwarf(tb testing.TB, dir, name string, flags ...string) string {
	tb.Helper()
	requireTool(tb, "gcc")
	if err := os.WriteFile(filepath.Join(dir, "dwarf.c"), []byte(dwarfC), 0o644); err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	compile(tb, dir, "gcc", append(append([]string{"-O0", "-o", bin}, flags...), "dwarf.c")...)
	return bin
}

// splitDebug moves bin's DWARF into dir/name.debug and strips bin.
func splitDebug(tb testing.TB, bin, dir string) {
	tb.Helper()
	requireTool(tb, "objcopy")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	compile(tb, filepath.Dir(bin), "objcopy", "--only-keep-debug", bin, filepath.Join(dir, filepath.Base(bin)+".debug"))
	compile(tb, filepath.Dir(bin), "objcopy", "--strip-debug", bin)
}

func TestDebugInfoParams(t *testing.T) {
	dir := t.TempDir()
	plain := buildDwarf(t, dir, "plain", "-g")
	split := buildDwarf(t, dir, "split", "-g", "-gsplit-dwarf")
	sibling := buildDwarf(t, dir, "sibling", "-g")
	splitDebug(t, sibling, filepath.Join(dir, ".debug"))
	elsewhere := buildDwarf(t, dir, "elsewhere", "-g")
	splitDebug(t, elsewhere, filepath.Join(dir, "dbg"))
	defer func(dirs []string) { DebugDirs = dirs }(DebugDirs)
	DebugDirs = []string{"dbg"}

	for _, bin := range []string{plain, split, sibling, elsewhere} {
		d, err := DebugInfo(bin)
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		for fn, want := range map[string][]string{
			"count": {"int* n", "char c"},
			"pick":  {"struct Foo* foo", "const char* name", "union U* u", "foo_t* t"},
			"main":  nil,
		} {
			params, err := d.Params(fn)
			if err != nil {
				t.Fatalf("%s: Params(%s): %v", filepath.Base(bin), fn, err)
			}
			var got []string
			for _, p := range params {
				got = append(got, CTypeName(p.Type)+" "+p.Name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: Params(%s) = %q, want %q", filepath.Base(bin), fn, got, want)
			}
		}
	}
}

func TestDebugInfoMissing(t *testing.T) {
	dir := t.TempDir()
	bin := buildDwarf(t, dir, "nodebug")
	if _, err := DebugInfo(bin); err == nil {
		t.Fatal("DebugInfo of a binary without DWARF succeeded")
	}
	d, err := DebugInfo(buildDwarf(t, dir, "withdebug", "-g"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Params("nosuchfunction"); err == nil {
		t.Error("Params of a missing function succeeded")
	}
	if _, ok := d.Type("struct Nope"); ok {
		t.Error("Type found struct Nope")
	}
}

func TestDebugInfoTypes(t *testing.T) {
	d, err := DebugInfo(buildDwarf(t, t.TempDir(), "types", "-g"))
	if err != nil {
		t.Fatal(err)
	}
	foo, ok := d.Type("struct Foo")
	if !ok {
		t.Fatal("no struct Foo")
	}
	s := foo.(*btf.Struct)
	want := []struct {
		name       string
		bits, size btf.Bits
		typ        string
	}{
		{"a", 0, 0, "int"},
		{"b", 32, 0, "char[10]"},
		{"c", 128, 0, "int[3]"},
		{"f", 224, 3, "unsigned int"},
		{"g", 227, 5, "unsigned int"},
		{"next", 256, 0, "struct Foo*"},
	}
	if s.Size != 40 || len(s.Members) != len(want) {
		t.Fatalf("struct Foo: size %d, %d members", s.Size, len(s.Members))
	}
	for i, w := range want {
		m := s.Members[i]
		if m.Name != w.name || m.Offset != w.bits || m.BitfieldSize != w.size || CTypeName(m.Type) != w.typ {
			t.Errorf("member %d: %s at %d, %d bits, %s; want %+v", i, m.Name, m.Offset, m.BitfieldSize, CTypeName(m.Type), w)
		}
	}
	// The pointer to itself is the same struct.
	if next := s.Members[5].Type.(*btf.Pointer).Target; next != foo {
		t.Errorf("struct Foo's next points to %v", next)
	}
	for _, name := range []string{"union U", "foo_t", "int"} {
		if _, ok := d.Type(name); !ok {
			t.Errorf("no %s", name)
		}
	}
}

func TestLineAddress(t *testing.T) {
	dir := t.TempDir()
	for _, flags := range [][]string{{"-g"}, {"-g", "-gsplit-dwarf"}} {
		bin := buildDwarf(t, dir, "lines", flags...)
		d, err := loadDebug(bin) // not cached: each build is new
		if err != nil {
			t.Fatal(err)
		}
		want := functionAddress(t, bin, "pick")
		for _, file := range []string{"dwarf.c", filepath.Join(dir, "dwarf.c")} {
			got, err := d.LineAddress(file, pickLine, 0)
			if err != nil || got != want {
				t.Errorf("%v: LineAddress(%s, %d) = %#x, %v; want pick's %#x", flags, file, pickLine, got, err, want)
			}
		}
		if _, err := d.LineAddress("dwarf.c", 1000, 0); err == nil {
			t.Errorf("%v: line 1000 has an address", flags)
		}
		if _, err := d.LineAddress("other.c", pickLine, 0); err == nil {
			t.Errorf("%v: other.c has an address", flags)
		}
	}
}

func functionAddress(tb testing.TB, bin, name string) uint64 {
	tb.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	tb.Fatalf("%s has no symbol %s", bin, name)
	return 0
}

func TestDebugInfoCppReferences(t *testing.T) {
	requireTool(t, "g++")
	dir := t.TempDir()
	src := "struct Foo { int a; };\nint f(int &x, Foo &&foo) { return x + foo.a; }\nint main() { int x = 1; return f(x, Foo{2}); }\n"
	if err := os.WriteFile(filepath.Join(dir, "refs.cc"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	compile(t, dir, "g++", "-g", "-O0", "-o", "refs", "refs.cc")
	d, err := DebugInfo(filepath.Join(dir, "refs"))
	if err != nil {
		t.Fatal(err)
	}
	params, err := d.Params("_Z1fRiO3Foo") // by its mangled name
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range params {
		got = append(got, CTypeName(p.Type)+" "+p.Name)
	}
	if want := []string{"int* x", "struct Foo* foo"}; !slices.Equal(got, want) {
		t.Errorf("params %q, want %q", got, want)
	}
}

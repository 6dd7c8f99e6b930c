package codegen

import (
	"bytes"
	"debug/elf"
	"regexp"
	"slices"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/sema"
)

// TestFilter keeps the probes --probe-filter matches, and BEGIN and END.
func TestFilter(t *testing.T) {
	out, _, err := compile(t, `BEGIN { } interval:ms:100 { } interval:ms:200 { } END { }`)
	if err != nil {
		t.Fatal(err)
	}
	out.Filter(regexp.MustCompile(`:200`).MatchString)
	var names []string
	for _, p := range out.Progs {
		names = append(names, p.Prog.Probe.Name)
		if out.Spec.Programs[p.Name] == nil {
			t.Errorf("%s kept without its program", p.Prog.Probe.Name)
		}
	}
	if want := []string{"begin", "interval:ms:200", "end"}; !slices.Equal(names, want) {
		t.Errorf("kept %q, want %q", names, want)
	}
	if len(out.Spec.Programs) != 3 {
		t.Errorf("%d programs in the collection, want 3", len(out.Spec.Programs))
	}
}

// TestHelperErrors checks that -k adds a helper error event at each map
// read and probe read, at its place in the script (a field from the
// inner expression on, as bpftrace places it), and nothing without.
func TestHelperErrors(t *testing.T) {
	src := `struct s { int a; } interval:ms:1 { @m[1] = 1; $x = @m[2]; $y = ((struct s *)0)->a; }`
	for _, k := range []bool{false, true} {
		f := token.NewFile("stdin", []byte(src))
		prog, errs := parser.ParseFile(f)
		if errs.HasErrors() {
			t.Fatal(errs)
		}
		info, errs := sema.Check(prog, nil)
		if errs.HasErrors() {
			t.Fatal(errs)
		}
		out, err := Compile(info, &Options{NumCPU: 2, File: f, HelperErrors: k})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range out.Events {
			if ev.Kind == EvHelperError {
				got = append(got, ev.Format+" "+string(f.Src[ev.At.Start:ev.At.End]))
			}
		}
		var want []string
		if k {
			want = []string{"map_lookup_elem @m[2]", "probe_read_kernel (struct s *)0)->a"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("-k %v: helper errors %q, want %q", k, got, want)
		}
	}
}

// TestWriteELF checks the object --emit-elf writes: a section per
// program named for its type, loop callbacks in .text, the maps in
// .maps with BTF, function information in .BTF.ext, and a relocation
// for each map and callback reference.
func TestWriteELF(t *testing.T) {
	out, _, err := compile(t, `BEGIN { for ($i : 0..3) { @x += $i; } } interval:ms:100 { @y = 1; }`)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := out.WriteELF(&b); err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != elf.EM_BPF || f.Type != elf.ET_REL {
		t.Errorf("machine %v, type %v", f.Machine, f.Type)
	}
	for _, name := range []string{"raw_tp/p0", "perf_event", ".text", ".maps", ".bss", "license", ".BTF", ".BTF.ext", ".relraw_tp/p0", ".rel.text", ".relperf_event"} {
		if f.Section(name) == nil {
			t.Errorf("no section %s", name)
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
	}
	for _, want := range []string{"p0", "p0_fn1", "p1", "globals", "events"} {
		if !slices.Contains(names, want) {
			t.Errorf("no symbol %s among %q", want, names)
		}
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("the object's BTF: %v", err)
	}
	var maps *btf.Datasec
	if err := spec.TypeByName(".maps", &maps); err != nil || len(maps.Vars) != len(out.Spec.Maps)-1 {
		t.Errorf(".maps: %v, want a variable for each map but globals", err)
	}
}

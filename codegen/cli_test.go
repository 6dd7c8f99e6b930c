package codegen

import (
	"regexp"
	"slices"
	"testing"

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

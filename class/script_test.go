package class

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"gtrace/compiler"
	"gtrace/internal/testutils"
	"gtrace/kernel"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// testFuncs are bio functions of every role, at two argument positions.
var testFuncs = []Func{
	{Name: "bio_endio", Param: "bio", Type: "bio", Fentry: true},
	{Name: "bio_init", Param: "bio", Type: "bio", Fentry: true},
	{Name: "bio_put", Param: "bio", Type: "bio", Fentry: true},
	{Name: "submit_bio", Param: "bio", Type: "bio", Fentry: true},
	{Name: "bio_add_page", Param: "bio", Type: "bio", Fentry: true},
	{Name: "bio_split", Param: "bio", Type: "bio", Fentry: true},
	{Name: "blk_mq_submit_bio", Param: "bio", Type: "bio", Fentry: true},
	{Name: "bio_chain", Param: "bio", Type: "bio", Fentry: true},
	{Name: "bio_copy_data", Arg: 1, Param: "src", Type: "bio", Fentry: true},
}

func testPlan(multi bool) *Plan {
	return &Plan{Struct: "bio", Funcs: testFuncs, Fields: []string{"bi_iter.bi_sector", "bi_iter.bi_size"},
		CPU: -1, Start: []string{"bio_init"}, End: []string{"bio_put"}, Multi: multi}
}

// TestGenerateGroups checks that the multi-kprobes group the functions by
// argument position and role, each function's return in one of the
// two multi-kretprobes.
func TestGenerateGroups(t *testing.T) {
	s := Generate(testPlan(true))
	want := map[string][]string{
		"kprobe:gtrace_class_arg0":        {"bio_endio", "submit_bio", "bio_add_page", "bio_split", "blk_mq_submit_bio", "bio_chain"},
		"kprobe:gtrace_class_arg1":        {"bio_copy_data"},
		"kprobe:gtrace_class_start_arg0":  {"bio_init"},
		"kprobe:gtrace_class_end_arg0":    {"bio_put"},
		"kretprobe:gtrace_class_exit":     {"bio_endio", "bio_init", "submit_bio", "bio_add_page", "bio_split", "blk_mq_submit_bio", "bio_chain", "bio_copy_data"},
		"kretprobe:gtrace_class_end_exit": {"bio_put"},
	}
	if len(s.Probes) != len(want) {
		t.Errorf("probes %v, want %v", s.Probes, want)
	}
	for ap, funcs := range want {
		if !slices.Equal(s.Probes[ap], funcs) {
			t.Errorf("%s: %v, want %v", ap, s.Probes[ap], funcs)
		}
		if !strings.Contains(s.Text, ap+" {") {
			t.Errorf("no %s in\n%s", ap, s.Text)
		}
	}
	fentry := Generate(testPlan(false))
	if len(fentry.Probes) != 0 || strings.Count(fentry.Text, "fentry:") != len(testFuncs) ||
		strings.Count(fentry.Text, "fexit:") != len(testFuncs) ||
		!strings.Contains(fentry.Text, "fentry:bio_copy_data {\n\t$o = (struct bio *)args.src;") {
		t.Errorf("fentry program:\n%s", fentry.Text)
	}
}

// TestCompile compiles both forms of the program against this kernel's
// BTF, and the filters that limit where a life starts.
func TestCompile(t *testing.T) {
	if _, err := kernel.KernelType("struct bio"); err != nil {
		testutils.Skip(t, "no kernel BTF with struct bio: "+err.Error())
	}
	members, err := Members("bio")
	if err != nil {
		t.Fatal(err)
	}
	filter, err := ParseFilter("bi_iter.bi_size > 4096 && comm != \"kworker\"", members)
	if err != nil {
		t.Fatal(err)
	}
	for _, multi := range []bool{true, false} {
		p := testPlan(multi)
		p.Pid, p.Comm, p.CPU, p.Filter = 1, "dd", 0, filter
		prog, s, err := Compile(p, compiler.Options{})
		if err != nil {
			var b bytes.Buffer
			if e, ok := err.(*compiler.Error); ok {
				e.Render(&b)
			}
			t.Fatalf("multi %v: %v\n%s\n%s", multi, err, b.String(), s.Text)
		}
		want := len(s.Probes)
		if !multi {
			want = 2 * len(testFuncs)
		}
		if len(prog.Output.Progs) != want {
			t.Errorf("multi %v: %d programs, want %d", multi, len(prog.Output.Progs), want)
		}
		if !strings.Contains(s.Text, `if (pid == 1 && comm == "dd" && cpu == 0 && ($o->bi_iter.bi_size > 4096 && comm != "kworker")) {`) {
			t.Errorf("multi %v: no filter in\n%s", multi, s.Text)
		}
	}
}

// TestOptionErrors checks that errors in --fields and --filter point
// into the option's text, whether found while reading it or by the
// compiler in the program made of it.
func TestOptionErrors(t *testing.T) {
	members := map[string]bool{"bi_iter": true, "bi_opf": true}
	for _, tc := range []struct {
		fields, filter string
		compile        bool // needs the kernel's BTF
		want           string
	}{
		{fields: "bi_opf,bi_iter..bi_size", want: `--fields:1:8-24: ERROR: "bi_iter..bi_size" is not a member path, such as bi_iter.bi_size
bi_opf,bi_iter..bi_size
       ~~~~~~~~~~~~~~~~
`},
		{filter: "bi_opf > 1; exit()", want: `--filter:1:11-12: ERROR: ';' is not allowed in a predicate: it reads the object's members, and builtins such as pid or comm
bi_opf > 1; exit()
          ~
`},
		{filter: `comm == "dd`, want: `--filter:1:9-12: ERROR: unterminated string
comm == "dd
        ~~~
`},
		{filter: "  ", want: "--filter:1:1-3: ERROR: empty predicate\n  \n~~\n"},
		{fields: "bi_opf,bi_nosuch", compile: true, want: `--fields:1:8-17: ERROR: Struct/union of type 'struct bio' does not contain a field named 'bi_nosuch'
bi_opf,bi_nosuch
       ~~~~~~~~~
`},
		{filter: "bi_iter.bi_nosuch > 4096", compile: true, want: `--filter:1:1-18: ERROR: Struct/union of type 'struct bvec_iter' does not contain a field named 'bi_nosuch'
bi_iter.bi_nosuch > 4096
~~~~~~~~~~~~~~~~~
`},
	} {
		t.Run(tc.fields+tc.filter, func(t *testing.T) {
			p := testPlan(true)
			var err error
			if tc.fields != "" {
				p.Fields, err = ParseFields(tc.fields)
			}
			if tc.filter != "" && err == nil {
				p.Filter, err = ParseFilter(tc.filter, members)
			}
			if tc.compile {
				if err != nil {
					t.Fatal(err)
				}
				if _, kerr := kernel.KernelType("struct bio"); kerr != nil {
					testutils.Skip(t, "no kernel BTF with struct bio: "+kerr.Error())
				}
				_, _, err = Compile(p, compiler.Options{})
			}
			located, ok := err.(*compiler.Error)
			if !ok {
				t.Fatalf("error %v, want one located in the option", err)
			}
			var b bytes.Buffer
			located.Render(&b)
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

// TestLocateElsewhere checks that an error in the generated program,
// outside the options' text, comes back without its place in it.
func TestLocateElsewhere(t *testing.T) {
	s := Generate(testPlan(true))
	var l diag.List
	l.Add(token.Span{Start: 0, End: 6}, "fentry:submit_bio: refused")
	l.Warn(token.Span{Start: 0, End: 6}, "a warning")
	err := s.Locate(&compiler.Error{File: token.NewFile("class bio", []byte(s.Text)), Diags: l})
	if _, located := err.(*compiler.Error); located || err.Error() != "fentry:submit_bio: refused" {
		t.Errorf("Locate gave %#v", err)
	}
}

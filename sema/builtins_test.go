package sema

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/internal/fakekernel"
	"gtrace/lang/builtin"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/probe"
)

// TestContextBuiltins checks, for every kind of probe and every builtin
// read from the context, that the checker refuses the builtin, at its
// place, exactly where the provider does not offer it.
func TestContextBuiltins(t *testing.T) {
	uses := []struct {
		b   builtin.Var
		use string
	}{
		{builtin.Args, "args.fd"},
		{builtin.ArgN, "arg0"},
		{builtin.Func, "func"},
		{builtin.Retval, "retval"},
	}
	for _, k := range probe.Kinds() {
		for _, u := range uses {
			t.Run(k.String()+"/"+u.b.String(), func(t *testing.T) {
				p := probe.Probe{Kind: k, Name: k.String() + ":x", Event: "x"}
				src := "kprobe:x { $v = " + u.use + "; }"
				f := token.NewFile("stdin", []byte(src))
				prog, errs := parser.ParseFile(f)
				if errs.HasErrors() {
					t.Fatal(errs)
				}
				_, errs = Check(prog, &Options{Config: DefaultConfig(),
					Expand:     func(string) ([]probe.Probe, error) { return []probe.Probe{p}, nil },
					Format:     fakekernel.Format,
					Func:       func(name string) (*btf.Func, error) { return nil, errors.New("no BTF") },
					HasKprobes: fakekernel.HasKprobes, Traceable: fakekernel.Traceable})
				want := fmt.Sprintf("The %s builtin can not be used with '%s' probes", strings.TrimSuffix(u.use, ".fd"), k)
				var refused bool
				for _, e := range errs {
					if e.Msg != want {
						continue
					}
					refused = true
					if at := token.Pos(strings.Index(src, u.use)); e.Span.Start != at {
						t.Errorf("%s at offset %d, want %d", e.Msg, e.Span.Start, at)
					}
				}
				if refused == p.Offers(u.b) {
					t.Errorf("%s offers %v: %v, but the checker said %v", k, u.b, p.Offers(u.b), errs)
				}
			})
		}
	}
}

// TestNcpus checks ncpus's type, bpftrace's uint64, in any probe.
func TestNcpus(t *testing.T) {
	for _, src := range []string{`BEGIN { $n = ncpus; }`, `tracepoint:sched:sched_switch { $n = ncpus; }`} {
		info, msg := check(t, src, false)
		if msg != "" {
			t.Fatalf("%s: %s", src, msg)
		}
		for _, p := range info.Progs {
			for id, b := range p.Builtins {
				if b == builtin.Ncpus && p.Types[id] != Uint64 {
					t.Errorf("%s: ncpus is %v, want uint64", src, p.Types[id])
				}
			}
		}
	}
}

package codegen

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/sema"
)

// FuzzCompile feeds code generation whatever the checker accepts: it must
// never panic, and its errors must be diagnostics inside the source.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`BEGIN { @x = @x; }`,
		`BEGIN { has_key(@m, 1); delete(@m, 1); }`,
		`BEGIN { return; @x = 1; }`,
		`BEGIN { while (1) { continue; } }`,
		`BEGIN { $s = 64; @x = 1 << $s; @y = -8 >> $s; @z = bswap((uint8)1); }`,
		`BEGIN { @m[1, "a"] = 2; for ($kv : @m) { if ($kv.1 > 1) { break; } @n[$kv.0] = len(@m); } }`,
		`BEGIN { for ($i : 0..3) { if ($i == 2) { return; } @c = count(); } print(@c); clear(@c); }`,
		`interval:s:1 { @h = hist(5); @l = lhist(3, 0, 10, 1); @s = stats(2); printf("%d %s\n", pid, comm); exit(); }`,
		`BEGIN { $t = (1, "two"); @t = $t; print($t.1); unroll(2) { @u++; } @b = strcontains("abc", "b"); }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file := token.NewFile("fuzz", []byte(src))
		prog, errs := parser.ParseFile(file)
		if errs.HasErrors() {
			return
		}
		info, errs := sema.Check(prog, &sema.Options{Config: sema.DefaultConfig(), Expand: noKernel,
			KernelType: func(name string) (btf.Type, error) { return nil, errors.New("no kernel types") },
			EnumValue:  func(string) (int64, bool) { return 0, false },
			Kaddr:      func(string) (uint64, bool) { return 0, false }})
		if errs.HasErrors() {
			return
		}
		_, err := Compile(info, &Options{NumCPU: 2, File: file})
		if err == nil {
			return
		}
		var l diag.List
		if !errors.As(err, &l) {
			t.Fatalf("error %v of %q is no diagnostic", err, src)
		}
		for _, e := range l {
			if e.Span.Start < 0 || int(e.Span.End) > len(src) || e.Span.Start > e.Span.End {
				t.Fatalf("error %q has span %v outside the source %q", e.Msg, e.Span, src)
			}
		}
	})
}

// noKernel expands only the probes that need no kernel, nor any file, to
// expand.
func noKernel(text string) ([]probe.Probe, error) {
	kind, _, _ := strings.Cut(text, ":")
	switch strings.ToLower(kind) {
	case "begin", "end", "interval", "i":
		return probe.Parse(text)
	}
	return nil, errors.New("not in this fuzz test")
}

package bench

import (
	"strings"
	"testing"
)

// TestCompileInputs keeps the benchmarks' inputs valid: a program that
// stopped compiling would leave a benchmark timing an error.
func TestCompileInputs(t *testing.T) {
	src := GenerateProgram(1000)
	if n := strings.Count(src, "\n"); n < 990 || n > 1000 {
		t.Errorf("GenerateProgram(1000) has %d lines", n)
	}
	out, err := Compile([]byte(src))
	if err != nil {
		t.Fatalf("generated program: %v", err)
	}
	if len(out.Progs) < 80 {
		t.Errorf("generated program compiled to %d programs, want one per probe", len(out.Progs))
	}
	for _, ol := range OneLiners {
		if _, err := Compile([]byte(ol.Src)); err != nil {
			t.Errorf("%s: %v", ol.Name, err)
		}
	}
	// gtbench's scripts, but for the wildcard, which needs the kernel's
	// list of tracepoints.
	scripts := []string{histScript, attachScript}
	for _, es := range eventScripts {
		scripts = append(scripts, es.src)
	}
	for _, src := range scripts {
		if _, err := Compile([]byte(src)); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// BenchmarkCompile1000Lines times lexing, parsing, checking and code
// generation of a 1000-line script. Target: under 100 ms (bpftrace 0.17,
// through LLVM, takes minutes).
func BenchmarkCompile1000Lines(b *testing.B) {
	benchmarkCompile(b, []byte(GenerateProgram(1000)))
}

// BenchmarkCompileOneLiner times the same for typical one-liners.
func BenchmarkCompileOneLiner(b *testing.B) {
	for _, ol := range OneLiners {
		b.Run(ol.Name, func(b *testing.B) {
			benchmarkCompile(b, []byte(ol.Src))
		})
	}
}

func benchmarkCompile(b *testing.B, src []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

package sema

import (
	"strings"
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

func TestStackCalls(t *testing.T) {
	tests := []struct {
		src, err  string
		format    string // @x's stack mode
		limit     int
		stackLens bool
	}{
		{src: `kprobe:f { @x = ustack(build_id); }`, format: "build_id"},
		{src: `kprobe:f { @x = ustack(build_id, 30); }`, format: "build_id", limit: 30},
		{src: `BEGIN { @x = (1, ustack(build_id, 30)); }`},
		{src: `kprobe:f { @x = kstack(raw, 1024); }`, format: "raw", limit: 1024},
		{src: `kprobe:f { @x = kstack(build_id); }`, err: "'build_id' stack mode can only be used for ustack"},
		{src: `kprobe:f { @x = ustack(1025); }`, err: "ustack([int limit]): limit shouldn't exceed 1024, 1025 given"},
		{src: `kprobe:f { @x = len(ustack); }`, stackLens: true},
		{src: `kprobe:f { $s = kstack(3); @x = len($s); }`, stackLens: true},
		{src: `kprobe:f { @x = len(1); }`, err: "len() expects a map with no key"},
		{src: `kprobe:f { @x = pid < 10000 ? ustack(1) : ustack(2); }`,
			err: "Ternary operator branches have different types: 'ustack_bpftrace_1' and 'ustack_bpftrace_2'"},
		{src: `kprobe:f { @x = ustack(bpftrace, 127); @x = ustack; }`, format: "bpftrace", limit: 127},
		{src: `kprobe:f { @x = kstack(raw); @x = kstack(perf); }`,
			err: "Type mismatch for @x: trying to assign value of type 'kstack_perf_127' when map already contains a value of type 'kstack_raw_127'"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, false)
			if errs != tt.err {
				t.Fatalf("errors %q, want %q", errs, tt.err)
			}
			if errs != "" {
				return
			}
			if v := info.Maps["@x"].Value; (v.Kind == KStack || v.Kind == UStack) && (v.Format != tt.format || v.Len != tt.limit) {
				t.Errorf("stack mode %q, limit %d; want %q, %d", v.Format, v.Len, tt.format, tt.limit)
			}
			if info.StackLens != tt.stackLens {
				t.Errorf("StackLens %v, want %v", info.StackLens, tt.stackLens)
			}
		})
	}
}

// TestStackModeBuildID: under stack_mode = build_id, ustack takes build
// ids and kstack, which has none, is raw, with a warning.
func TestStackModeBuildID(t *testing.T) {
	src := `kprobe:f { @u = ustack; @k = kstack; }`
	prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(src)))
	if errs.HasErrors() {
		t.Fatal(errs)
	}
	cfg := DefaultConfig()
	cfg.StackMode = "build_id"
	info, errs := Check(prog, fakeOptions(cfg))
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "Falling back to 'raw' mode") {
		t.Fatalf("diagnostics %v, want the fallback warning", errs)
	}
	if u, k := info.Maps["@u"].Value, info.Maps["@k"].Value; u.Format != "build_id" || k.Format != "raw" {
		t.Errorf("ustack mode %q, kstack mode %q; want build_id, raw", u.Format, k.Format)
	}
}

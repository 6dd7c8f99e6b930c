package sema

import (
	"strings"
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestDwUstack checks dw_ustack's type, as ustack's, its unstable
// setting, and its errors.
func TestDwUstack(t *testing.T) {
	const warning = "Script is using an unstable feature: dw_ustack (DWARF stack unwinding). To prevent this warning you must explicitly enable it in the config e.g. unstable_dw_ustack=enable"
	tests := []struct {
		name, src string
		noTarget  bool
		want      string // the messages, errors and warnings
		format    string // @x's stack mode, without errors
		limit     int
	}{
		{name: "warns by default", src: `kprobe:f { @x = dw_ustack; @y = dw_ustack(); }`, want: warning, format: "bpftrace"},
		{name: "enabled", src: `config = { unstable_dw_ustack = enable } kprobe:f { @x = dw_ustack(perf, 5); }`, format: "perf", limit: 5},
		{name: "same type as ustack", src: `config = { unstable_dw_ustack = enable } kprobe:f { @x = dw_ustack(raw); @x = ustack(raw); }`, format: "raw"},
		{name: "error", src: `config = { unstable_dw_ustack = error } BEGIN { @x = dw_ustack; }`,
			want: "dw_ustack (DWARF stack unwinding) feature is not enabled by default. To enable this unstable feature, set the config flag to enable. unstable_dw_ustack=enable"},
		{name: "no target", src: `config = { unstable_dw_ustack = enable } BEGIN { @x = dw_ustack(); }`, noTarget: true,
			want: "dw_ustack requires a target process. Use -p, -c, or --dwarf-pid to specify one."},
		{name: "build id", src: `config = { unstable_dw_ustack = enable } BEGIN { @x = dw_ustack(build_id); }`,
			want: "dw_ustack: the 'build_id' stack mode is not supported"},
		{name: "unknown mode", src: `config = { unstable_dw_ustack = enable } BEGIN { @x = dw_ustack(fast); }`,
			want: "dw_ustack(): unknown stack mode fast: want bpftrace, perf, raw, build_id"},
		{name: "bad limit", src: `config = { unstable_dw_ustack = enable } BEGIN { @x = dw_ustack(0); }`,
			want: "dw_ustack(): the number of frames must be a constant from 1 to 1024"},
		{name: "too many arguments", src: `config = { unstable_dw_ustack = enable } BEGIN { @x = dw_ustack(raw, 1, 2); }`,
			want: "dw_ustack() takes up to 2 arguments (3 provided)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(tt.src)))
			if errs.HasErrors() {
				t.Fatal(errs)
			}
			opts := fakeOptions(DefaultConfig())
			opts.UnwindTarget = !tt.noTarget
			info, errs := Check(prog, opts)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Msg)
			}
			if got := strings.Join(msgs, "\n"); got != tt.want {
				t.Fatalf("messages %q, want %q", got, tt.want)
			}
			if info == nil {
				return
			}
			if v := info.Maps["@x"].Value; v.Kind != UStack || v.Format != tt.format || v.Len != tt.limit {
				t.Errorf("@x is %v %q %d; want a ustack %q %d", v.Kind, v.Format, v.Len, tt.format, tt.limit)
			}
		})
	}
}

package sema

import (
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestConfigRange checks that no config value wraps when it becomes an
// int: each is checked against its range, in the config block (located at
// its entry) and in the environment (with nowhere to point at).
func TestConfigRange(t *testing.T) {
	tests := []struct {
		name, block string
		env         map[string]string
		want        Config // fields compared: the three integers
		err         string // the error, or "" for none
		located     bool   // the error is a located diagnostic
	}{
		{name: "defaults", want: DefaultConfig()},
		{name: "block", block: "max_strlen = 64; max_map_keys = 10; max_probes = 5",
			want: Config{MaxStrlen: 64, MaxMapKeys: 10, MaxProbes: 5}},
		{name: "env", env: map[string]string{"BPFTRACE_MAX_STRLEN": "1024", "BPFTRACE_MAX_MAP_KEYS": "4294967295"},
			want: Config{MaxStrlen: 1024, MaxMapKeys: 4294967295, MaxProbes: 1024}},
		{name: "block over env", block: "max_strlen = 8", env: map[string]string{"BPFTRACE_MAX_STRLEN": "100"},
			want: Config{MaxStrlen: 8, MaxMapKeys: 4096, MaxProbes: 1024}},
		{name: "strlen wraps", block: "max_strlen = 9223372036854775809",
			err: "config setting max_strlen: 9223372036854775809 is out of range: want 1 to 1024", located: true},
		{name: "strlen too large", block: "max_strlen = 1025",
			err: "config setting max_strlen: 1025 is out of range: want 1 to 1024", located: true},
		{name: "probes wraps", block: "max_probes = 18446744073709551615",
			err: "config setting max_probes: 18446744073709551615 is out of range: want 1 to 4294967295", located: true},
		{name: "map keys wraps", block: "max_map_keys = 9223372036854775808",
			err: "config setting max_map_keys: 9223372036854775808 is out of range: want 1 to 4294967295", located: true},
		{name: "zero", block: "max_map_keys = 0",
			err: "config setting max_map_keys: 0 is out of range: want 1 to 4294967295", located: true},
		{name: "not an integer", block: "max_probes = abc",
			err: "config setting max_probes: want an integer from 1 to 4294967295", located: true},
		{name: "unknown", block: "max_nothing = 1", err: "unknown config setting: max_nothing", located: true},
		{name: "env wraps", env: map[string]string{"BPFTRACE_MAX_STRLEN": "9223372036854775809"},
			err: "BPFTRACE_MAX_STRLEN: 9223372036854775809 is out of range: want 1 to 1024"},
		{name: "env negative", env: map[string]string{"BPFTRACE_MAX_PROBES": "-1"},
			err: `BPFTRACE_MAX_PROBES: want an integer from 1 to 4294967295, got "-1"`},
		{name: "env too large", env: map[string]string{"BPFTRACE_MAX_MAP_KEYS": "18446744073709551616"},
			err: `BPFTRACE_MAX_MAP_KEYS: want an integer from 1 to 4294967295, got "18446744073709551616"`},
		{name: "env word", env: map[string]string{"BPFTRACE_MISSING_PROBES": "sometimes"},
			err: `BPFTRACE_MISSING_PROBES: want error, warn or ignore, got "sometimes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := func(key string) (string, bool) {
				v, ok := tt.env[key]
				return v, ok
			}
			src := "BEGIN {}"
			if tt.block != "" {
				src = "config = { " + tt.block + " } " + src
			}
			prog, errs := parser.ParseFile(token.NewFile("stdin", []byte(src)))
			if errs.HasErrors() {
				t.Fatalf("parse %q: %v", src, errs)
			}
			got, errs := configure(Config{}, env, prog.Config)
			switch {
			case tt.err == "" && len(errs) > 0:
				t.Fatalf("error %v, want none", errs)
			case tt.err != "" && (len(errs) != 1 || errs[0].Msg != tt.err):
				t.Fatalf("errors %v, want %q", errs, tt.err)
			case tt.err != "" && (errs[0].Span.Start != token.NoPos) != tt.located:
				t.Fatalf("error %v located: %v, want %v", errs, !tt.located, tt.located)
			case tt.err != "":
				return
			}
			if got.MaxStrlen != tt.want.MaxStrlen || got.MaxMapKeys != tt.want.MaxMapKeys || got.MaxProbes != tt.want.MaxProbes {
				t.Errorf("config = %+v, want %+v", got, tt.want)
			}
		})
	}
}

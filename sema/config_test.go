package sema

import (
	"strings"
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestConfigure checks the config block and the environment: every
// spelling of a setting's name, the environment over the block, each kind
// of value, and that no value wraps when it becomes an int. Errors in the
// block are located at their entry, the environment's nowhere.
func TestConfigure(t *testing.T) {
	tests := []struct {
		name, block string
		env         map[string]string
		want        map[string]any // settings read back, by short name
		err         string         // the error, or "" for none
		located     bool           // the error is a located diagnostic
		warn        string         // a warning expected with no error
	}{
		{name: "defaults", want: map[string]any{"max_strlen": int64(1024), "max_map_keys": int64(4096),
			"max_probes": int64(1024), "on_stack_limit": int64(512), "stack_mode": "bpftrace", "license": "GPL",
			"print_maps_on_exit": true, "str_trunc_trailer": "..", "unstable_tseries": "warn", "missing_probes": "error"}},
		{name: "block", block: "max_strlen = 64; max_map_keys = 10; max_probes = 5",
			want: map[string]any{"max_strlen": int64(64), "max_map_keys": int64(10), "max_probes": int64(5)}},
		{name: "env", env: map[string]string{"BPFTRACE_MAX_STRLEN": "1024", "BPFTRACE_MAX_MAP_KEYS": "4294967295"},
			want: map[string]any{"max_strlen": int64(1024), "max_map_keys": int64(4294967295)}},
		{name: "env over block", block: "max_strlen = 8; stack_mode = perf",
			env:  map[string]string{"BPFTRACE_MAX_STRLEN": "100", "BPFTRACE_STACK_MODE": "raw"},
			want: map[string]any{"max_strlen": int64(100), "stack_mode": "raw"}},
		{name: "names", block: "BPFTRACE_STACK_MODE = raw; STR_TRUNC_TRAILER = \"~\"; Print_Maps_On_Exit = 0",
			want: map[string]any{"stack_mode": "raw", "str_trunc_trailer": "~", "print_maps_on_exit": false}},
		{name: "bools", block: "cpp_demangle = false; lazy_symbolication = 0; show_debug_info = true",
			want: map[string]any{"cpp_demangle": false, "lazy_symbolication": false, "show_debug_info": true}},
		{name: "unstable", block: "unstable_tseries = 1; unstable_typeinfo = enable; unstable_dw_ustack = false",
			want: map[string]any{"unstable_tseries": "enable", "unstable_typeinfo": "enable", "unstable_dw_ustack": "error"}},
		{name: "license", block: `license = "Dual BSD/GPL"`, want: map[string]any{"license": "Dual BSD/GPL"}},
		{name: "on stack limit zero", block: "on_stack_limit = 0", want: map[string]any{"on_stack_limit": int64(0)}},
		{name: "big strings", env: map[string]string{"BPFTRACE_MAX_STRLEN": "9999"}, want: map[string]any{"max_strlen": int64(9999)}},
		{name: "unknown", block: "bad_config = raw", err: "bad_config: not a known configuration option", located: true},
		{name: "renamed", block: "strlen = 5", err: "strlen: key has been renamed to 'max_strlen'", located: true},
		{name: "environment only", block: "BPFTRACE_BTF = 1", err: "BPFTRACE_BTF: can only be set as an environment variable", located: true},
		{name: "bad license", block: `license = "Potato"`, located: true,
			err: "Invalid value for license. Found: Potato. Valid values: Dual MIT/GPL, Dual BSD/GPL, Dual MPL/GPL, GPL and additional rights, GPL v2, GPL."},
		{name: "bad stack mode", block: "stack_mode = fancy", located: true,
			err: "stack_mode: Invalid value for stack_mode: valid values are bpftrace, perf, raw, and build_id."},
		{name: "bad bool", block: "cpp_demangle = maybe", located: true,
			err: "cpp_demangle: Invalid bool value: valid values are true, false, 1 or 0."},
		{name: "strlen wraps", block: "max_strlen = 9223372036854775809", located: true,
			err: "max_strlen: 9223372036854775809 is out of range: want 1 to 16384"},
		{name: "probes wraps", block: "max_probes = 18446744073709551615", located: true,
			err: "max_probes: 18446744073709551615 is out of range: want 1 to 4294967295"},
		{name: "zero", block: "max_map_keys = 0", err: "max_map_keys: 0 is out of range: want 1 to 4294967295", located: true},
		{name: "not an integer", block: "max_probes = abc", err: "max_probes: expecting a number, got abc", located: true},
		{name: "env wraps", env: map[string]string{"BPFTRACE_MAX_STRLEN": "9223372036854775809"},
			err: "BPFTRACE_MAX_STRLEN: 9223372036854775809 is out of range: want 1 to 16384"},
		{name: "env negative", env: map[string]string{"BPFTRACE_MAX_PROBES": "-1"},
			err: "BPFTRACE_MAX_PROBES: expecting a number, got -1"},
		{name: "env word", env: map[string]string{"BPFTRACE_MISSING_PROBES": "sometimes"},
			err: "BPFTRACE_MISSING_PROBES: Invalid value for missing_probes: valid values are ignore, warn, and error."},
		{name: "old environment name", env: map[string]string{"BPFTRACE_STRLEN": "8"},
			warn: "BPFTRACE_STRLEN is ignored: it has been renamed to BPFTRACE_MAX_STRLEN"},
		{name: "environment only", env: map[string]string{"BPFTRACE_BTF": "/tmp/vmlinux.btf"},
			warn: "BPFTRACE_BTF is ignored: gtrace takes kernel types from the running kernel's BTF"},
		{name: "deprecated", block: "symbol_source = dwarf",
			warn: "symbol_source: config setting is deprecated and has no effect"},
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
			case tt.err == "" && errs.HasErrors():
				t.Fatalf("error %v, want none", errs)
			case tt.warn != "" && (len(errs) != 1 || errs[0].Msg != tt.warn):
				t.Fatalf("warnings %v, want %q", errs, tt.warn)
			case tt.err != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Msg, tt.err)):
				t.Fatalf("errors %v, want %q", errs, tt.err)
			case tt.err != "" && (errs[0].Span.Start != token.NoPos) != tt.located:
				t.Fatalf("error %v located: %v, want %v", errs, !tt.located, tt.located)
			case tt.err != "":
				return
			}
			for key, want := range tt.want {
				if v := options[key].get(&got); v != want {
					t.Errorf("%s = %v (%T), want %v (%T)", key, v, v, want, want)
				}
			}
		})
	}
}

// TestConfigFields checks that the config builtin's record has a field
// for every setting but cache_user_symbols, once.
func TestConfigFields(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range configFields {
		if _, ok := options[f]; !ok || seen[f] {
			t.Errorf("field %s: no such setting, or twice", f)
		}
		seen[f] = true
	}
	for key := range options {
		if !seen[key] && key != "cache_user_symbols" {
			t.Errorf("setting %s has no field", key)
		}
	}
}

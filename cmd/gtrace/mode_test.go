package main

import "testing"

func TestMode(t *testing.T) {
	tests := []struct {
		args      []string
		mode, err string
	}{
		{args: []string{"--mode", "bench"}, mode: "bench"},
		{args: []string{"--mode=bench"}, mode: "bench"},
		{args: []string{"--bench"}, mode: "bench"},
		{args: nil, mode: ""},
		{args: []string{"--mode", "test"}, mode: "test"},
		{args: []string{"--test"}, mode: "test"},
		{args: []string{"--mode", "format"}, err: "--mode format is not supported"},
		{args: []string{"--bench", "--test"}, err: "USAGE: --test conflicts with existing --mode"},
		{args: []string{"--mode", "fast"}, err: "USAGE: --mode can only be 'codegen', 'compiler-bench', 'bench', 'test' or 'format'."},
		{args: []string{"--mode", "bench", "--bench"}, err: "USAGE: --bench conflicts with existing --mode"},
	}
	for _, tt := range tests {
		got, err := parseArgs(append(tt.args, "-e", "bench:a {}"))
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("parseArgs(%q): error %v, want %q", tt.args, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("parseArgs(%q): %v", tt.args, err)
		case tt.err == "" && got.mode != tt.mode:
			t.Errorf("parseArgs(%q): mode %q, want %q", tt.args, got.mode, tt.mode)
		}
	}
}

package main

import (
	"reflect"
	"testing"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want options
	}{
		{[]string{"-e", "BEGIN {}", "a", "b"}, options{program: "BEGIN {}", params: []string{"a", "b"}, format: "text"}},
		{[]string{"script.bt", "7"}, options{filename: "script.bt", params: []string{"7"}, format: "text"}},
		{[]string{"-lv", "t:syscalls:*"}, options{list: true, listVerbose: true, listPattern: "t:syscalls:*", format: "text"}},
		{[]string{"-l"}, options{list: true, format: "text"}},
		{[]string{"-f", "json", "-o", "out", "-q", "-v", "-e", "x"}, options{program: "x", format: "json", outFile: "out", quiet: true, verbose: true}},
		{[]string{"-c", "ls -l", "-p", "42", "--dry-run", "--unsafe", "-d", "ast", "-e", "x"},
			options{program: "x", command: "ls -l", pid: 42, dryRun: true, unsafe: true, dump: "ast", format: "text"}},
		{[]string{"-e", "x", "--", "-1"}, options{program: "x", params: []string{"-1"}, format: "text"}},
	}
	for _, tt := range tests {
		got, err := parseArgs(tt.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("parseArgs(%q) = %+v, want %+v", tt.args, *got, tt.want)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-e"},
		{"-e", ""},
		{"-f", "xml", "-e", "x"},
		{"-p", "abc", "-e", "x"},
		{"-d", "everything", "-e", "x"},
		{"--bogus", "-e", "x"},
	} {
		if _, err := parseArgs(args); err == nil {
			t.Errorf("parseArgs(%q) succeeded, want an error", args)
		}
	}
}

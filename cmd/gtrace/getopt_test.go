package main

import (
	"bytes"
	"testing"

	"gtrace/sema"
)

// TestProgramOptions checks the program options given against those a
// script reads, and what gtrace prints when they differ or on --help.
func TestProgramOptions(t *testing.T) {
	opts := map[string]*sema.ProgramOption{
		"aa": {Name: "aa", Description: "Description of aa"},
		"bb": {Name: "bb"},
	}
	tests := []struct {
		name  string
		opts  map[string]*sema.ProgramOption
		named []string
		want  string // printed; "" when the options are fine
	}{
		{"expected", opts, []string{"aa=5", "bb"}, ""},
		{"none", nil, nil, ""},
		{"unexpected", opts, []string{"cc", "aa=1", "dd=2"},
			"ERROR: unexpected program command line options: --cc, --dd\nHINT: expected program options: --aa, --bb\n"},
		{"help", opts, []string{"help"}, "HINT: expected program options:\n--aa: Description of aa\n--bb\n"},
		{"help without options", nil, []string{"help"}, "HINT: no custom program options defined.\n"},
		{"unexpected without options", nil, []string{"x"},
			"ERROR: unexpected program command line options: --x\nHINT: no custom program options defined.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			ok := programOptionsOK(tt.opts, tt.named, &b)
			if ok != (tt.want == "") || b.String() != tt.want {
				t.Errorf("ok %v, printed %q; want %q", ok, b.String(), tt.want)
			}
		})
	}
}

package parser

import (
	"fmt"
	"strings"
	"testing"
)

func TestMapDecls(t *testing.T) {
	tests := []struct{ src, want string }{
		{"let @a = hash(5); BEGIN { }", "@a hash 5 [0,17)"},
		{"let @a = lruhash(2); let @b = percpuhash(0x10); BEGIN { }", "@a lruhash 2 [0,20); @b percpuhash 16 [21,47)"},
		// The ';' is optional, and declarations may follow probes.
		{"BEGIN { } let @c = percpulruhash(7)\nEND { }", "@c percpulruhash 7 [10,35)"},
		// The type is checked later.
		{"let @d = potato(1); BEGIN { }", "@d potato 1 [0,19)"},
	}
	for _, tt := range tests {
		prog := mustParse(t, tt.src)
		var got []string
		for _, d := range prog.MapDecls {
			got = append(got, fmt.Sprintf("%s %s %d [%d,%d)", d.Map.Name, d.Kind, d.MaxEntries, d.Sp.Start, d.Sp.End))
		}
		if s := strings.Join(got, "; "); s != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, s, tt.want)
		}
		if n := len(prog.Probes); n == 0 {
			t.Errorf("%s: no probes parsed", tt.src)
		}
	}
}

func TestMapDeclErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"let @a = hash(); BEGIN { }", "1:15-16: syntax: expected positive integer for map declaration max entries"},
		{"let @a = hash(0); BEGIN { }", "1:15-16: syntax: expected positive integer for map declaration max entries"},
		{"let @a = hash(4294967296); BEGIN { }", "1:15-25: syntax: expected positive integer for map declaration max entries"},
		{"let @a = hash(-1); BEGIN { }", "1:15-16: syntax: expected positive integer for map declaration max entries"},
		{"let @a = 5; BEGIN { }", "1:10-11: syntax error, unexpected integer, expecting map type name"},
		{"let @a hash(5); BEGIN { }", "1:8-12: syntax error, unexpected identifier, expecting ="},
		// An error leaves the probes after it to be parsed.
		{"let @a = hash(); BEGIN { @x = ; }", "1:15-16: syntax: expected positive integer for map declaration max entries; 1:31-32: syntax error, unexpected ;"},
	}
	for _, tt := range tests {
		_, errs := parse(t, tt.src)
		if got := strings.Join(errs, "; "); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.src, got, tt.want)
		}
	}
}

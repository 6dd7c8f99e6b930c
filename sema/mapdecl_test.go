package sema

import (
	"bytes"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// rendered checks src and renders its diagnostics as the command line
// prints them.
func rendered(t *testing.T, src string) (*Info, string) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	info, errs := Check(prog, fakeOptions(DefaultConfig()))
	var b bytes.Buffer
	diag.Render(&b, f, errs)
	return info, b.String()
}

func TestMapDeclErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"let @a = percpuhash(2); BEGIN { @a = 1; }", `stdin:1:33-35: ERROR: Incompatible map types. Type from declaration: percpuhash. Type from value/key type: hash
let @a = percpuhash(2); BEGIN { @a = 1; }
                                ~~
`},
		{"let @a = percpulruhash(2); BEGIN { @a[1]++; }", `stdin:1:36-38: ERROR: Incompatible map types. Type from declaration: percpulruhash. Type from value/key type: hash
let @a = percpulruhash(2); BEGIN { @a[1]++; }
                                   ~~
`},
		{"let @a = hash(2); BEGIN { @a = count(); }", `stdin:1:27-29: ERROR: Incompatible map types. Type from declaration: hash. Type from value/key type: percpuhash
let @a = hash(2); BEGIN { @a = count(); }
                          ~~
`},
		{"let @a = lruhash(2); BEGIN { @a[1] = hist(3); }", `stdin:1:30-32: ERROR: Incompatible map types. Type from declaration: lruhash. Type from value/key type: percpuhash
let @a = lruhash(2); BEGIN { @a[1] = hist(3); }
                             ~~
`},
		{"let @a = potato(2); BEGIN { @a[1] = count(); }", `stdin:1:1-20: ERROR: Invalid bpf map type: potato
let @a = potato(2); BEGIN { @a[1] = count(); }
~~~~~~~~~~~~~~~~~~~
`},
		{"let @a = hash(2);\nlet @a = lruhash(3);\nBEGIN { @a = 1; }", `stdin:2:1-21: ERROR: Map @a is already declared
let @a = lruhash(3);
~~~~~~~~~~~~~~~~~~~~
`},
		{"let @a = hash(2); BEGIN { print(1); }", `stdin:1:1-18: WARNING: Unused map: @a
let @a = hash(2); BEGIN { print(1); }
~~~~~~~~~~~~~~~~~
`},
	}
	for _, tt := range tests {
		if _, got := rendered(t, tt.src); got != tt.want {
			t.Errorf("%s\n got:\n%s\nwant:\n%s", tt.src, got, tt.want)
		}
	}
}

func TestMapDecls(t *testing.T) {
	tests := []struct {
		src, name, kind string
		size            int
	}{
		{"let @a = hash(2); BEGIN { @a = 1; }", "@a", KindHash, 2},
		{"let @a = lruhash(5); BEGIN { @a[1, 2] = \"x\"; }", "@a", KindLRUHash, 5},
		{"let @a = percpuhash(7); BEGIN { @a[1] = count(); }", "@a", KindPerCPUHash, 7},
		{"let @a = percpulruhash(9); BEGIN { @a = hist(1); }", "@a", KindPerCPULRUHash, 9},
		{"BEGIN { @b = 1; }", "@b", "", 0},
	}
	for _, tt := range tests {
		info, msgs := rendered(t, tt.src)
		if msgs != "" {
			t.Errorf("%s: %s", tt.src, msgs)
			continue
		}
		mi := info.Maps[tt.name]
		if mi.Kind != tt.kind || mi.MaxEntries != tt.size {
			t.Errorf("%s: kind %q size %d, want %q %d", tt.src, mi.Kind, mi.MaxEntries, tt.kind, tt.size)
		}
	}
}

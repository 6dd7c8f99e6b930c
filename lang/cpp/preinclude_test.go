package cpp

import (
	"strings"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestPreInclude checks --include: a file found in the -I directories
// goes before the script, whose lines stay, and whose errors in the file
// name it; a system header gtrace knows defines its constants; anything
// else is an error.
func TestPreInclude(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"defs.h": "#define ANSWER 42\nstruct pair { int a; int b; };\n",
		"bad.h":  "#if\n",
	})
	tests := []struct {
		includes []string
		src      string
		out      string // the expanded script, after the included text
		errs     string
	}{
		{[]string{"defs.h"}, "BEGIN {\n  print(ANSWER);\n}", "BEGIN {\n  print(42);\n}", ""},
		{[]string{"errno.h", "defs.h"}, "BEGIN { print(EPERM + ANSWER); }", "BEGIN { print(1 + 42); }", ""},
		{[]string{"no_such.h"}, "BEGIN { }", "BEGIN { }",
			"ERROR: --include no_such.h: file not found in the working directory or the -I directories, nor a system header gtrace knows\n"},
		{[]string{"bad.h"}, "BEGIN { }", "BEGIN { }", "bad.h:1:1-4: ERROR: #if with no expression\n#if\n~~~\nbad.h:1:1-4: ERROR: unterminated #if\n#if\n~~~\n"},
	}
	for _, tt := range tests {
		f := token.NewFile("stdin", []byte(tt.src))
		res, errs := Preprocess(f, &Options{IncludeDirs: []string{dir}, Includes: tt.includes})
		var b strings.Builder
		diag.Render(&b, f, errs)
		if got := strings.ReplaceAll(b.String(), dir+"/", ""); got != tt.errs {
			t.Errorf("%q: errors:\n%s\nwant:\n%s", tt.includes, got, tt.errs)
		}
		if errs.HasErrors() {
			continue
		}
		out := string(res.File.Src)
		if !strings.HasSuffix(out, tt.out) || strings.Count(out, "\n") != strings.Count(tt.src, "\n") {
			t.Errorf("%q: expanded to %q, want it to end in %q with the script's lines", tt.includes, out, tt.out)
		}
		tree, perrs := parser.ParseFile(res.File)
		if perrs.HasErrors() {
			t.Errorf("%q: %v", tt.includes, perrs)
			continue
		}
		// Spans in the script map back to it past the included text.
		sp := res.Span(tree.Probes[0].Span())
		if got := string(f.Src[sp.Start:sp.End]); got != tt.src {
			t.Errorf("%q: the probe maps back to %q", tt.includes, got)
		}
	}
}

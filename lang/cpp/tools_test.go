package cpp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// TestDebianTools preprocesses and parses every bpftrace tool that
// Debian's bpftrace package installs as /usr/sbin/*.bt. Many of them use
// #include and #ifndef BPFTRACE_HAVE_BTF.
func TestDebianTools(t *testing.T) {
	paths, _ := filepath.Glob("/usr/sbin/*.bt")
	if len(paths) == 0 {
		testutils.Skip(t, "no /usr/sbin/*.bt: Debian's bpftrace package is not installed")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f := token.NewFile(path, src)
			res, errs := Preprocess(f, nil)
			if len(errs) == 0 {
				var perrs diag.List
				_, perrs = parser.ParseFile(res.File)
				errs = res.Errors(perrs)
			}
			if len(errs) > 0 {
				var b strings.Builder
				diag.Render(&b, f, errs)
				t.Fatalf("\n%s", b.String())
			}
			if got, want := strings.Count(string(res.File.Src), "\n"), strings.Count(string(src), "\n"); got != want {
				t.Errorf("%d lines after preprocessing, %d before", got, want)
			}
		})
	}
}

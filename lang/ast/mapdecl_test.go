package ast_test

import "testing"

// TestPrintMapDecls prints map declarations in their place among the
// probes, as `let @a = kind(size);`.
func TestPrintMapDecls(t *testing.T) {
	src := "let @a = lruhash(0x10)\nBEGIN { @a[1] = 1; }\nlet @b = hash(2);"
	want := "let @a = lruhash(16);\nBEGIN\n{\n  @a[1] = 1;\n}\nlet @b = hash(2);\n"
	if got := printed(t, src, true); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

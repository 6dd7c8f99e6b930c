package compiler_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gtrace/compiler"
)

// TestMacroInHeader places an error in a macro defined in an included
// file there, and the call it was expanded from in the script, past a
// #define that moved the script's text.
func TestMacroInHeader(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "macros.h"), []byte("macro inc($x) { $x + 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "#define STEP 2\n#include \"macros.h\"\nBEGIN { $a = \"s\"; print(inc($a) + STEP); }\n"
	_, err := compiler.Compile([]byte(src), &compiler.Options{Name: filepath.Join(dir, "t.bt")})
	var located *compiler.Error
	if !errors.As(err, &located) {
		t.Fatalf("error %v (%T), want a *compiler.Error", err, err)
	}
	var b bytes.Buffer
	located.Render(&b)
	want := filepath.Join(dir, "macros.h") + ":1:17-23: ERROR: Type mismatch for '+': comparing 'string[2]' with 'int8'\n" +
		"macro inc($x) { $x + 1 }\n" +
		"                ~~~~~~\n" +
		filepath.Join(dir, "t.bt") + ":3:25-32: ERROR: expanded from\n" +
		"BEGIN { $a = \"s\"; print(inc($a) + STEP); }\n" +
		"                        ~~~~~~~\n"
	if b.String() != want {
		t.Errorf("rendered\n%s\nwant\n%s", b.String(), want)
	}
}

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// hangLimit is far more than any of these scripts takes to fail; it only
// turns a hang into a failure.
const hangLimit = 60 * time.Second

// writeBT writes a script into a test temp dir and returns its path.
func writeBT(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestManyBlockComments checks that 80,000 block comments, which took the
// scanner quadratic time, reach the syntax error after them.
func TestManyBlockComments(t *testing.T) {
	path := writeBT(t, "comments.bt", "BEGIN { "+strings.Repeat("/* */ ", 80000)+"@x = ; }\n")
	r := harness.RunTimeout(t, hangLimit, harness.Bin(), path)
	if r.Code != 1 || !strings.Contains(r.Stderr, "ERROR: syntax error, unexpected ;") {
		t.Errorf("exit code %d, stderr:\n%.300s", r.Code, r.Stderr)
	}
	t.Logf("failed in %v", r.Elapsed)
}

// TestPrintfWidthBound checks that a width or precision that would print
// a gigabyte per event is refused at the format string.
func TestPrintfWidthBound(t *testing.T) {
	tests := []struct{ script, want string }{
		{`BEGIN { printf("%-999999999d\n", 1); exit(); }`,
			"stdin:1:16-32: ERROR: printf: Format width too large: %-999999999d\n" +
				`BEGIN { printf("%-999999999d\n", 1); exit(); }` + "\n" +
				"               ~~~~~~~~~~~~~~~~\n"},
		{`BEGIN { printf("%s %.70000d\n", "a", 1); }`,
			"stdin:1:16-31: ERROR: printf: Format precision too large: %.70000d\n" +
				`BEGIN { printf("%s %.70000d\n", "a", 1); }` + "\n" +
				"               ~~~~~~~~~~~~~~~\n"},
	}
	for _, tc := range tests {
		r := harness.RunTimeout(t, hangLimit, harness.Bin(), "-e", tc.script)
		if r.Code != 1 || r.Stderr != tc.want || r.Stdout != "" {
			t.Errorf("%s: exit code %d, stdout %q, stderr:\n%s\nwant:\n%s", tc.script, r.Code, r.Stdout, r.Stderr, tc.want)
		}
	}
}

// TestPrintfPercents checks that the text after the last conversion prints
// as written, "%%" included, as bpftrace 0.17 prints it.
func TestPrintfPercents(t *testing.T) {
	testutils.RequireRoot(t)
	script := `BEGIN { printf("%%%\n"); printf("x%%y %d%%\n", 7); exit(); }`
	want := "%%%\nx%y 7%%\n"
	r := harness.Gtrace(t, "-e", script)
	if got := strings.TrimRight(harness.StripAttaching(r.Stdout), "\n") + "\n"; r.Code != 0 || got != want {
		t.Errorf("exit code %d, output %q, want %q; stderr:\n%s", r.Code, got, want, r.Stderr)
	}
	bpftrace := harness.RequireBpftrace(t)
	if b := harness.Run(t, bpftrace, "-e", script); harness.StripAttaching(b.Stdout) != r.Stdout {
		t.Errorf("bpftrace printed %q, gtrace %q", b.Stdout, r.Stdout)
	}
}

// TestUnrollBound checks that nested unrolls that would make a million
// copies of their body fail at once, at the unroll that goes too far,
// and that a large but bounded unroll still compiles.
func TestUnrollBound(t *testing.T) {
	script := "BEGIN { unroll(100) { unroll(100) { unroll(100) { @x++; } } } exit(); }"
	want := "stdin:1:44-47: ERROR: unrolled code is too large: more than 100000 statements and expressions in this probe\n" +
		script + "\n" +
		"                                           ~~~\n"
	r := harness.RunTimeout(t, hangLimit, harness.Bin(), "-e", script)
	if r.Code != 1 || r.Stderr != want {
		t.Errorf("exit code %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}

	testutils.RequireRoot(t)
	r = harness.RunTimeout(t, hangLimit, harness.Bin(), "-e", "BEGIN { $a = 0; unroll(100) { unroll(100) { $a += 2; } } printf(\"%d\\n\", $a); exit(); }")
	if r.Code != 0 || harness.StripAttaching(r.Stdout) != "20000\n\n\n" {
		t.Errorf("exit code %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestIncludeFiles checks that #include reads the script's own headers,
// next to it or in -I directories, and refuses one it cannot find.
func TestIncludeFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"s/myhdr.h": "#define ANSWER 42\nstruct point {\n\tint x;\n\tint y;\n};\n",
		"i/ihdr.h":  "#define IVAL 7\n",
		"j/jhdr.h":  "#define JVAL 8\n",
		"s/bad.h":   "// bad\n#define X 1\n@x = ;\n",
		"s/main.bt": "#include \"myhdr.h\"\n#include <ihdr.h>\n#include \"jhdr.h\"\n" +
			"BEGIN { printf(\"%d %d %d %d\\n\", ANSWER, IVAL, JVAL, sizeof(struct point)); exit(); }\n",
		"s/missing.bt": "#include <linux/sched.h>\n#include <lol/no.h>\nBEGIN { exit(); }\n",
		"s/bad.bt":     "#include \"bad.h\"\nBEGIN { exit(); }\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := filepath.Join(dir, "s")

	r := harness.RunTimeout(t, hangLimit, harness.Bin(), filepath.Join(s, "missing.bt"))
	want := s + "/missing.bt:2:10-20: ERROR: 'lol/no.h' file not found in the -I directories, nor a system header gtrace knows\n" +
		"#include <lol/no.h>\n" +
		"         ~~~~~~~~~~\n"
	if r.Code != 1 || r.Stderr != want {
		t.Errorf("missing header: exit code %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}

	r = harness.RunTimeout(t, hangLimit, harness.Bin(), filepath.Join(s, "bad.bt"))
	want = s + "/bad.h:3:4-5: ERROR: syntax error, unexpected =, expecting {\n" +
		"@x = ;\n" +
		"   ~\n"
	if r.Code != 1 || r.Stderr != want {
		t.Errorf("error in a header: exit code %d, stderr:\n%s\nwant:\n%s", r.Code, r.Stderr, want)
	}

	testutils.RequireRoot(t)
	r = harness.RunTimeout(t, hangLimit, harness.Bin(), "-I", filepath.Join(dir, "i"), "-I"+filepath.Join(dir, "j"), filepath.Join(s, "main.bt"))
	if got := harness.StripAttaching(r.Stdout); r.Code != 0 || got != "42 7 8 8\n\n\n" {
		t.Errorf("exit code %d, output %q, stderr:\n%s", r.Code, got, r.Stderr)
	}
}

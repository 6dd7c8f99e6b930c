package cpp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gtrace/lang/diag"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// writeFiles writes files, by path relative to a new directory, and
// returns the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// preprocessFile preprocesses and parses the script at path, as gtrace
// does, and returns the expanded source, with the blanks at the ends of
// its lines trimmed, and the diagnostics rendered, with dir cut from
// their file names.
func preprocessFile(t *testing.T, dir, path string, opts *Options) (out, errs string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := token.NewFile(path, src)
	res, list := Preprocess(f, opts)
	if len(list) == 0 {
		_, perrs := parser.ParseFile(res.File)
		list = res.Errors(perrs)
		if got, want := strings.Count(string(res.File.Src), "\n"), strings.Count(string(src), "\n"); got != want {
			t.Errorf("the expanded source has %d lines, the source %d", got, want)
		}
	}
	var b strings.Builder
	diag.Render(&b, f, list)
	lines := strings.Split(string(res.File.Src), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n"), strings.ReplaceAll(b.String(), dir+"/", "")
}

func TestIncludeFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"s/local.h":    "// a comment\n#define N 5\n/* two\n   lines */\nstruct p { int x; };\n#include \"sub/more.h\"\n",
		"s/sub/more.h": "#define M (N + 1)\n#include \"near.h\"\n",
		"s/sub/near.h": "#define NEAR 3\n",
		"inc/sys.h":    "#define SYS 7\n",
		"inc/local.h":  "#define WRONG 1\n",
		"inc/uses.h":   "#define TWICE (2 * MINE)\n",
		"s/guard.h":    "#ifndef GUARD_H\n#define GUARD_H\nstruct g { int a; };\n#endif\n",
	})
	inc := []string{filepath.Join(dir, "inc")}
	tests := []struct {
		name, script, want string
		dirs               []string
	}{
		{"quoted, next to the script", "#include \"local.h\"\nBEGIN { @ = N + M + NEAR; }",
			"struct p { int x; };\nBEGIN { @ = 5 + (5 + 1) + 3; }", nil},
		{"angle, in -I", "#include <sys.h>\nBEGIN { @ = SYS; }", "\nBEGIN { @ = 7; }", inc},
		{"quoted, in -I", "#include \"sys.h\"\nBEGIN { @ = SYS; }", "\nBEGIN { @ = 7; }", inc},
		{"script's directory first", "#include \"local.h\"\nBEGIN { @ = N; }",
			"struct p { int x; };\nBEGIN { @ = 5; }", inc},
		{"script's macros in the header", "#define MINE 4\n#include <uses.h>\nBEGIN { @ = TWICE; }",
			"\n\nBEGIN { @ = (2 * 4); }", inc},
		{"include guard", "#include \"guard.h\"\n#include \"guard.h\"\nBEGIN { }",
			"struct g { int a; };\n\nBEGIN { }", nil},
		{"system header", "#include <linux/sched.h>\nBEGIN { @ = TASK_RUNNING; }", "\nBEGIN { @ = 0; }", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "s", "t.bt")
			if err := os.WriteFile(path, []byte(tt.script), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errs := preprocessFile(t, dir, path, &Options{IncludeDirs: tt.dirs})
			if errs != "" {
				t.Fatalf("errors:\n%s", errs)
			}
			// The header's text is on the directive's line, one line.
			if out = strings.Join(strings.Fields(out), " "); out != strings.Join(strings.Fields(tt.want), " ") {
				t.Errorf("got %q, want %q", out, tt.want)
			}
		})
	}
}

// TestIncludeErrors checks that an #include that cannot be read fails at
// the directive, and that errors in an included file are shown in it.
func TestIncludeErrors(t *testing.T) {
	chain := map[string]string{}
	for i := range 12 {
		chain[fmt.Sprintf("c%d.h", i)] = fmt.Sprintf("#include \"c%d.h\"\n#include \"c%d.h\"\n", i+1, i+1)
	}
	chain["c12.h"] = ""
	chain["self.h"] = "#include \"self.h\"\n"
	chain["err.h"] = "#define A 1\n#if A\n#error no\n#endif\n"
	chain["open.h"] = "#if 1\n"
	chain["syntax.h"] = "\n\n  @x = ;\n"
	chain["cdef.h"] = "#define T in\nstruct s {\n  T a;\n};\n"
	chain["deep/a.h"] = "#include \"b.h\"\n"
	chain["deep/b.h"] = "\n\nBEGIN { @x = ; }\n"
	chain["unterminated.h"] = "/* open\n"
	chain["dir.h/x"] = ""
	chain["big.h"] = strings.Repeat("// x\n", 140000)
	dir := writeFiles(t, chain)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.h"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, script, want string }{
		{"missing, quoted", "#include \"lol.h\"\nBEGIN { }",
			"t.bt:1:10-17: ERROR: 'lol.h' file not found in " + dir + " or the -I directories, nor a system header gtrace knows\n" +
				"#include \"lol.h\"\n         ~~~~~~~\n"},
		{"missing, angle", "#include <lol/no.h>\nBEGIN { }",
			"t.bt:1:10-20: ERROR: 'lol/no.h' file not found in the -I directories, nor a system header gtrace knows\n" +
				"#include <lol/no.h>\n         ~~~~~~~~~~\n"},
		{"a directory", "#include \"dir.h\"\nBEGIN { }",
			"t.bt:1:10-17: ERROR: 'dir.h' file not found in " + dir + " or the -I directories, nor a system header gtrace knows\n" +
				"#include \"dir.h\"\n         ~~~~~~~\n"},
		{"a fifo", "#include \"fifo.h\"\nBEGIN { }",
			"t.bt:1:10-18: ERROR: cannot read the included file: fifo.h is not a regular file\n" +
				"#include \"fifo.h\"\n         ~~~~~~~~\n"},
		{"device", "#include </dev/zero>\nBEGIN { }",
			"t.bt:1:10-21: ERROR: cannot read the included file: /dev/zero is not a regular file\n" +
				"#include </dev/zero>\n         ~~~~~~~~~~~\n"},
		{"itself", "#include \"self.h\"\nBEGIN { }",
			"self.h:1:10-18: ERROR: #include nested more than 32 deep\n#include \"self.h\"\n         ~~~~~~~~\n"},
		{"twice over", "#include \"c0.h\"\nBEGIN { }",
			"c11.h:2:10-17: ERROR: more than 1000 files included\n#include \"c12.h\"\n         ~~~~~~~\n"},
		{"too large", "#include \"big.h\"\n#include \"big.h\"\nBEGIN { }",
			"t.bt:2:10-17: ERROR: the expanded script is too large: more than 1048576 bytes\n" +
				"#include \"big.h\"\n         ~~~~~~~\n"},
		{"error directive", "#include \"err.h\"\nBEGIN { }",
			"err.h:3:1-7: ERROR: #error no\n#error no\n~~~~~~\n"},
		{"unterminated if", "#include \"open.h\"\n#endif\nBEGIN { }",
			"open.h:1:1-4: ERROR: unterminated #if\n#if 1\n~~~\n" +
				"t.bt:2:1-7: ERROR: #endif without #if\n#endif\n~~~~~~\n"},
		{"syntax error", "#include \"syntax.h\"\nBEGIN { }",
			"syntax.h:3:6-7: ERROR: syntax error, unexpected =, expecting {\n  @x = ;\n     ~\n"},
		{"nested", "#include \"deep/a.h\"\nBEGIN { }",
			"deep/b.h:3:14-15: ERROR: syntax error, unexpected ;\nBEGIN { @x = ; }\n             ~\n"},
		{"unterminated comment", "#include \"unterminated.h\"\nBEGIN { }",
			"unterminated.h:1-2: ERROR: end of file during comment\n/* open\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.bt")
			if err := os.WriteFile(path, []byte(tt.script), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errs := preprocessFile(t, dir, path, nil)
			if errs != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", errs, tt.want)
			}
		})
	}
}

func TestFlatten(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\nb", "a b"},
		{"a // c \\\n d\ne", "a           e"},
		{"a /* c\n */ b", "a          b"},
		{"\"x // y\" /* z", "\"x // y\" /* z"},
		{"/* open\nx", "/* open x"},
	}
	for _, tt := range tests {
		if got := string(flatten([]byte(tt.in))); got != tt.want {
			t.Errorf("flatten(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

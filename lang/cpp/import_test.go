package cpp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImport(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"s/lib/a.bt":     "macro greet() { print(\"hi\"); }\n",
		"s/lib/b.h":      "struct Foo { int x; };\n",
		"s/lib/skip.txt": "not read\n",
		"s/one.bt":       "import \"lib/a.bt\";\nmacro twice() { greet(); greet(); }\n",
		"s/defs.bt":      "#define N 3\n",
	})
	tests := []struct{ name, script, want string }{
		{"a script", "import \"lib/a.bt\";\nBEGIN { greet(); }",
			"macro greet() { print(\"hi\"); }\nBEGIN { greet(); }"},
		{"a directory, headers first", "import \"lib\";\nBEGIN { greet(); }",
			"struct Foo { int x; }; macro greet() { print(\"hi\"); }\nBEGIN { greet(); }"},
		{"once each", "import \"lib\";\nimport \"lib/a.bt\";\nimport \"one.bt\";\nBEGIN { twice(); }",
			"struct Foo { int x; }; macro greet() { print(\"hi\"); }\n\nmacro twice() { greet(); greet(); }\nBEGIN { twice(); }"},
		{"an absolute path", "import \"" + filepath.Join(dir, "s/lib/a.bt") + "\";\nBEGIN { greet(); }",
			"macro greet() { print(\"hi\"); }\nBEGIN { greet(); }"},
		{"the script's macros in it", "import \"defs.bt\";\nBEGIN { @ = N; }", "\nBEGIN { @ = 3; }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "s", "t.bt")
			if err := os.WriteFile(path, []byte(tt.script), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errs := preprocessFile(t, dir, path, nil)
			if errs != "" {
				t.Fatalf("errors:\n%s", errs)
			}
			if out = strings.Join(strings.Fields(out), " "); out != strings.Join(strings.Fields(tt.want), " ") {
				t.Errorf("got %q, want %q", out, tt.want)
			}
		})
	}
}

// TestImportErrors checks that an import that cannot be read fails at
// its path, and that errors in an imported script are shown in it.
func TestImportErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"bad.bt":     "\nBEGIN { @x = ; }\n",
		"prog.bpf.c": "int f(void) { return 0; }\n",
		"notes.txt":  "x\n",
		"open/a.bt":  "BEGIN { }\n",
	})
	if err := os.Chmod(filepath.Join(dir, "open"), 0o777); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, script, want string }{
		{"missing", `import "nope.bt"; BEGIN { }`, "t.bt:1:8-17: ERROR: import: stat nope.bt: no such file or directory"},
		{"BPF C", `import "prog.bpf.c"; BEGIN { }`, "t.bt:1:8-20: ERROR: import: prog.bpf.c is BPF C, which gtrace cannot compile"},
		{"other files", `import "notes.txt"; BEGIN { }`, "t.bt:1:8-19: ERROR: import: notes.txt is neither a bpftrace script (.bt) nor a C header (.h)"},
		{"writable by anyone", `import "open"; BEGIN { }`, "t.bt:1:8-14: ERROR: import: open is writable by anyone: refusing to import from it"},
		{"no semicolon", `import "bad.bt" BEGIN { }`, "t.bt:1:17-22: ERROR: import expects ';' after its path"},
		{"error in the imported script", "import \"bad.bt\";\nBEGIN { }", "bad.bt:2:14-15: ERROR: syntax error, unexpected ;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.bt")
			if err := os.WriteFile(path, []byte(tt.script), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errs := preprocessFile(t, dir, path, nil)
			first, _, _ := strings.Cut(errs, "\n")
			if first != tt.want {
				t.Errorf("got %q, want %q\n%s", first, tt.want, errs)
			}
		})
	}
}

package compiler_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/compiler"
	"gtrace/sema"
)

// TestErrors checks that every stage's errors come back located, as the
// command line prints them.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, src string
		env       map[string]string
		want      string // the rendered diagnostics
	}{
		{name: "preprocessor", src: "#if\n#endif\nBEGIN {}",
			want: "x.bt:1:1-4: ERROR: #if with no expression\n#if\n~~~\n"},
		{name: "parser", src: "BEGIN { @x = ; }",
			want: "x.bt:1:14-15: ERROR: syntax error, unexpected ;\nBEGIN { @x = ; }\n             ~\n"},
		{name: "checker", src: "BEGIN { x }",
			want: "x.bt:1:9-10: ERROR: Unknown identifier: 'x'\nBEGIN { x }\n        ~\n"},
		{name: "config block", src: "config = { max_strlen = 20000 } BEGIN {}",
			want: "x.bt:1:12-30: ERROR: max_strlen: 20000 is out of range: want 1 to 16384\n" +
				"config = { max_strlen = 20000 } BEGIN {}\n           ~~~~~~~~~~~~~~~~~~\n"},
		{name: "environment", src: "BEGIN {}", env: map[string]string{"BPFTRACE_MAX_PROBES": "0"},
			want: "ERROR: BPFTRACE_MAX_PROBES: 0 is out of range: want 1 to 4294967295\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compiler.Compile([]byte(tt.src), &compiler.Options{Name: "x.bt",
				Check: sema.Options{Env: lookup(tt.env)}})
			var located *compiler.Error
			if !errors.As(err, &located) {
				t.Fatalf("error %v (%T), want a *compiler.Error", err, err)
			}
			var b bytes.Buffer
			located.Render(&b)
			if b.String() != tt.want {
				t.Errorf("rendered\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

// lookup is env as an os.LookupEnv.
func lookup(env map[string]string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		v, ok := env[key]
		return v, ok
	}
}

// TestConfig checks that the config block and then the environment set
// what the checker and code generation see, over the caller's settings.
func TestConfig(t *testing.T) {
	src := `config = { max_map_keys = 77; max_strlen = 8 } BEGIN { @[1] = 1; printf("%s", $1); }`
	prog, err := compiler.Compile([]byte(src), &compiler.Options{
		Check: sema.Options{Config: sema.Config{Params: []string{"p"}},
			Env: lookup(map[string]string{"BPFTRACE_MAX_STRLEN": "32"})}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := prog.Info.Config
	if cfg.MaxMapKeys != 77 || cfg.MaxStrlen != 32 || cfg.MaxProbes != 1024 || len(cfg.Params) != 1 {
		t.Errorf("config %+v, want max_map_keys from the block, max_strlen from the environment", cfg)
	}
	for name, m := range prog.Output.Spec.Maps {
		if strings.HasPrefix(name, "AT_") && m.MaxEntries != 77 {
			t.Errorf("map %s has %d entries, want the config's 77", name, m.MaxEntries)
		}
	}
}

// TestDumps checks that -d ast and -d codegen print between the stages,
// and that an include directory is searched.
func TestDumps(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "defs.h"), []byte("#define GREETING \"hi\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var astOut, codeOut bytes.Buffer
	_, err := compiler.Compile([]byte("#include <defs.h>\nBEGIN { printf(GREETING); }"), &compiler.Options{
		IncludeDirs: []string{dir}, DumpAST: &astOut, DumpCodegen: &codeOut})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(astOut.String(), "AST after: parse\n") || !strings.Contains(astOut.String(), `printf("hi")`) {
		t.Errorf("-d ast printed\n%s", astOut.String())
	}
	if !strings.HasPrefix(codeOut.String(), "BPF instructions\n") || !strings.Contains(codeOut.String(), "begin:") {
		t.Errorf("-d codegen printed\n%s", codeOut.String())
	}
}

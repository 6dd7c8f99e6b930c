package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestPidNamespace runs gtrace as the first process of a new pid
// namespace: pid and tid, in it, are 1, as BEGIN runs on gtrace's first
// thread; pid(init) and tid(init) are the initial namespace's.
func TestPidNamespace(t *testing.T) {
	testutils.RequireRoot(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		testutils.Skip(t, "no unshare")
	}
	cmd := exec.Command(unshare, "--fork", "--pid", "--mount-proc", harness.Bin(), "-e",
		`BEGIN { printf("%d %d %d %d %d %d\n", pid, pid(curr_ns), pid(init), tid, tid(curr_ns), tid(init)); exit(); }`)
	r := harness.RunCmd(t, cmd, 30*time.Second)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	out := strings.TrimSpace(harness.StripAttaching(r.Stdout))
	m := regexp.MustCompile(`^1 1 (\d+) 1 1 (\d+)$`).FindStringSubmatch(out)
	if m == nil || m[1] == "1" || m[1] != m[2] {
		t.Errorf("got %q, want 1 1 N 1 1 N with N the pid outside", out)
	}
}

// TestStdlibOutput checks how the standard library's strings and names
// print, in text and JSON.
func TestStdlibOutput(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-f", "json", "-e", `BEGIN { print(strerror(7)); }`}, `{"type": "value", "data": "Argument list too long"}`},
		{[]string{"-e", `BEGIN { printf("%s|%s|%s\n", strerror(1), signal_name(15), syscall_name(1)); }`}, "Operation not permitted|Terminated|write"},
		{[]string{"-e", `BEGIN { printf("%s\n", username); }`}, "root"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := harness.Gtrace(t, tt.args...)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if !strings.Contains(r.Stdout, tt.want+"\n") {
				t.Errorf("stdout %q, want a line %q", r.Stdout, tt.want)
			}
		})
	}
}

// TestAssertError checks the error of a failed assert(), at the call,
// and the exit code.
func TestAssertError(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `BEGIN { assert(false, "My error message"); }`)
	want := "stdin:1:9-42: ERROR: assert failed: My error message\n" +
		`BEGIN { assert(false, "My error message"); }` + "\n" +
		"        ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
	if r.Code != 1 || !strings.Contains(r.Stderr, want) {
		t.Errorf("exit code %d, stderr:\n%s\nwant 1 and:\n%s", r.Code, r.Stderr, want)
	}
}

// TestImport runs a script that imports a directory of a header and a
// script of macros.
func TestImport(t *testing.T) {
	testutils.RequireRoot(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	files := map[string]string{
		filepath.Join(lib, "types.h"):  "struct Foo { long a; int b; };\n",
		filepath.Join(lib, "greet.bt"): "macro greet(x) { printf(\"hello %d\\n\", x); }\n",
		filepath.Join(dir, "main.bt"):  "import \"lib\";\n\nBEGIN { greet(sizeof(struct Foo)); exit(); }\n",
	}
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := harness.Gtrace(t, filepath.Join(dir, "main.bt"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "hello 16\n") {
		t.Errorf("exit code %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

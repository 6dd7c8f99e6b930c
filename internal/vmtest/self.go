package vmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// Inside reports whether this process runs in a vmtest guest.
func Inside() bool {
	return os.Getenv("GTRACE_VMTEST") == "1"
}

// InVM runs the calling test in a guest. Outside a guest it boots cfg
// with the running test binary as /test, runs just this test there,
// logs its output, fails t if it failed, and returns false. In the guest
// it returns true, so the rest of the test body runs there:
//
//	func TestKprobe(t *testing.T) {
//		if !vmtest.InVM(t, vmtest.Config{Kernel: vmtest.Debian61}) {
//			return
//		}
//		// runs in the guest, as root
//	}
//
// CI is passed on to the guest. The test binary must be statically
// linked, which a Go test binary is unless a package it imports uses cgo.
// A TestMain runs in the guest too: it should skip host-only setup, such
// as building binaries, when Inside reports true.
func InVM(t *testing.T, cfg Config) bool {
	t.Helper()
	if Inside() {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/test": exe}
	for guest, host := range cfg.Files {
		files[guest] = host
	}
	env := map[string]string{}
	for k, v := range cfg.Env {
		env[k] = v
	}
	if ci, ok := os.LookupEnv("CI"); ok {
		env["CI"] = ci
	}
	cfg.Files, cfg.Env = files, env

	res := Run(t, cfg, "/test", "-test.run", runPattern(t.Name()), "-test.v", "-test.count=1")
	t.Logf("in the guest:\n%s%s", res.Stdout, res.Stderr)
	switch {
	case strings.Contains(res.Stdout, "--- SKIP: "+t.Name()+" "):
		testutils.Skip(t, "skipped in the guest")
	case res.ExitCode != 0:
		t.Errorf("the test failed in the guest (exit status %d)", res.ExitCode)
	case !strings.Contains(res.Stdout, "--- PASS: "+t.Name()+" "):
		t.Errorf("the test did not pass in the guest")
	}
	return false
}

// runPattern is a -test.run pattern matching exactly the test, or
// subtest, named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// BuildGtrace builds the gtrace command, statically linked, into a
// temporary directory of t and returns its path.
func BuildGtrace(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gtrace")
	// go test puts its own GOROOT/bin first in PATH.
	cmd := exec.Command("go", "build", "-o", bin, "gtrace/cmd/gtrace")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building gtrace: %v\n%s", err, out)
	}
	return bin
}

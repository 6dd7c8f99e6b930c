package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestEmitELF writes a script as a BPF object with --emit-elf, loads it
// with bpftool, as a user would, runs its BEGIN program and reads what it
// wrote with bpftool: its loops (callbacks in .text, with BTF function
// information) and maps (BTF-defined) work as gtrace's own.
func TestEmitELF(t *testing.T) {
	testutils.RequireRoot(t)
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		testutils.Skip(t, "no bpftool (apt-get install bpftool)")
	}
	obj := filepath.Join(t.TempDir(), "prog.o")
	script := `BEGIN { for ($i : 0..5) { @sum += $i; } @m[1] = 5; @m[2] = 6; for ($kv : @m) { @vals += $kv.1; } }
		tracepoint:syscalls:sys_enter_getpid { @calls = count(); }`
	if r := harness.Gtrace(t, "--emit-elf", obj, "-e", script); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("--emit-elf: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	pin := filepath.Join("/sys/fs/bpf", "gtrace-emit-elf-test")
	progs, maps := pin+"-progs", pin+"-maps"
	os.RemoveAll(progs)
	os.RemoveAll(maps)
	t.Cleanup(func() { os.RemoveAll(progs); os.RemoveAll(maps) })
	if out, err := exec.Command(bpftool, "prog", "loadall", obj, progs, "pinmaps", maps).CombinedOutput(); err != nil {
		t.Fatalf("bpftool prog loadall: %v\n%s", err, out)
	}
	names, _ := os.ReadDir(progs)
	if len(names) != 2 {
		t.Fatalf("bpftool loaded %d programs, want BEGIN's and the tracepoint's", len(names))
	}
	// BEGIN is a raw tracepoint program gtrace runs itself, with
	// BPF_PROG_TEST_RUN; bpftool prog run cannot, as it always passes data.
	begin, err := ebpf.LoadPinnedProgram(filepath.Join(progs, "p0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer begin.Close()
	if _, err := begin.Run(&ebpf.RunOptions{}); err != nil {
		t.Fatalf("run BEGIN: %v", err)
	}
	for name, want := range map[string]int64{"sum": 10, "vals": 11} {
		if got := mapValue(t, bpftool, maps, name); got != want {
			t.Errorf("@%s = %d, want %d", name, got, want)
		}
	}
}

// mapValue reads the value of key-less map @name, pinned in dir, with
// bpftool's JSON.
func mapValue(t *testing.T, bpftool, dir, name string) int64 {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_"+name) {
			continue
		}
		out, err := exec.Command(bpftool, "-j", "map", "dump", "pinned", filepath.Join(dir, e.Name())).Output()
		if err != nil {
			t.Fatalf("bpftool map dump %s: %v", e.Name(), err)
		}
		// Each entry's value is its bytes, in hex, little endian.
		var dump []struct {
			Value []string `json:"value"`
		}
		if err := json.Unmarshal(out, &dump); err != nil || len(dump) != 1 {
			t.Fatalf("bpftool map dump %s: %v\n%s", e.Name(), err, out)
		}
		var v int64
		for i, b := range dump[0].Value {
			n, err := strconv.ParseUint(b, 0, 8)
			if err != nil || i >= 8 {
				t.Fatalf("bpftool map dump %s: value %q", e.Name(), dump[0].Value)
			}
			v |= int64(n) << (8 * i)
		}
		return v
	}
	t.Fatalf("no pinned map for @%s among %v", name, entries)
	return 0
}

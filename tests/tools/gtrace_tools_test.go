package tools

import (
	"encoding/json"
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

// TestToolsCommand checks `gtrace tools`: the list, show, -h, a bad
// flag, and the same through a link named after the tool.
func TestToolsCommand(t *testing.T) {
	list := harness.Gtrace(t, "tools")
	if list.Code != 0 || !regexp.MustCompile(`(?m)^Storage:\n(  \S+ +\S.*\n)*  biolatency +Block I/O latency`).MatchString(list.Stdout) {
		t.Errorf("gtrace tools: exit code %d, output:\n%s%s", list.Code, list.Stdout, list.Stderr)
	}
	show := harness.Gtrace(t, "tools", "show", "biolatency")
	script, err := os.ReadFile("../../tools/storage/biolatency.bt")
	if err != nil {
		t.Fatal(err)
	}
	if show.Code != 0 || show.Stdout != string(script) {
		t.Errorf("gtrace tools show biolatency: exit code %d, not the script:\n%s", show.Code, show.Stdout)
	}
	if r := harness.Gtrace(t, "tools", "show", "nope"); r.Code != 1 || !strings.Contains(r.Stderr, `ERROR: no tool is called "nope"`) {
		t.Errorf("show of no tool: exit code %d, stderr %q", r.Code, r.Stderr)
	}

	link := filepath.Join(t.TempDir(), "biolatency")
	if err := os.Symlink(harness.Bin(), link); err != nil {
		t.Fatal(err)
	}
	help := harness.Gtrace(t, "tools", "biolatency", "-h")
	linked := harness.Run(t, link, "-h")
	if help.Code != 0 || !strings.HasPrefix(help.Stdout, "usage: biolatency [-h] [-j] [-c CMD]") || linked.Stdout != help.Stdout {
		t.Errorf("biolatency -h: exit code %d, output:\n%s\nthrough the link:\n%s", help.Code, help.Stdout, linked.Stdout)
	}
	bad := harness.Run(t, link, "-D", "-x", "1")
	if bad.Code != 2 || !strings.HasPrefix(bad.Stderr, "biolatency: unknown flag -x\nusage: biolatency ") {
		t.Errorf("biolatency -x: exit code %d, stderr %q", bad.Code, bad.Stderr)
	}
}

// TestBiolatencyHost runs biolatency around direct writes on this
// machine's disk: at least the writes of dd are in the histogram of
// writes. Other I/O of the machine may add to it; the VM tests count
// exactly.
func TestBiolatencyHost(t *testing.T) {
	testutils.RequireRoot(t)
	dir, err := os.MkdirTemp("/var/tmp", "biolatency")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dd := "/usr/bin/dd if=/dev/zero of=" + filepath.Join(dir, "f") + " bs=4k count=64 oflag=direct status=none"
	// A file system on a device that trace no block I/O, such as a
	// tmpfs, would leave the histogram empty.
	if out, err := exec.Command("findmnt", "-n", "-o", "SOURCE", "--target", dir).Output(); err != nil || !strings.HasPrefix(string(out), "/dev/") {
		testutils.Skip(t, "/var/tmp is on no block device: "+string(out))
	}
	r := harness.RunTimeout(t, time.Minute, harness.Bin(), "tools", "biolatency", "-F", "-j", "-c", dd)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	writes := 0
	for _, line := range strings.Split(r.Stdout, "\n") {
		var rec struct {
			Type string
			Data map[string]map[string][]struct{ Count int }
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "hist" {
			continue
		}
		for _, b := range rec.Data["@usecs_by_op"]["REQ_OP_WRITE"] {
			writes += b.Count
		}
	}
	if writes < 64 {
		t.Errorf("%d writes in the histogram, want at least dd's 64:\n%s", writes, r.Stdout)
	}
	if !strings.HasPrefix(r.Stdout, `{"type": "printf", "data": "Tracing block device I/O... Hit Ctrl-C to end.\n"}`) {
		t.Errorf("output does not start with the banner:\n%s", r.Stdout)
	}
}

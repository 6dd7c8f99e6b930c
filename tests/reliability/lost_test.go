package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// How lost events are reported.
//
// bpftrace 0.17 reads perf buffers: the kernel tells it of refused records
// with a PERF_RECORD_LOST record, written once there is room again, and
// bpftrace prints "Lost N events" on stdout (text) or
// {"type": "lost_events", "data": {"events": N}} (JSON) at that point in
// the stream. Losses that no later record reports are never printed.
//
// bpftrace v0.26, which gtrace follows, reads a ring buffer and a counter
// of refused records. Between polls it reports what the counter gained
// since its last report: text prints "Lost N events" on stderr, JSON
// {"type": "lost_events", "count": N, "data": {"events": N}} on stdout.
// At exit it adds "WARNING: Total lost event count: N" on stderr, in both
// formats (src/bpftrace.cpp, poll_event_loss and run).

// lostEvents is how many read events the stalled workload fires. gtrace's
// ring buffer is 1 MiB and every record takes at least 16 bytes, so it
// holds at most 65536 records; the pipe holds 64 KiB of 7-byte lines.
// Anything above about 75000 must lose events while nothing reads stdout.
const lostEvents = 200000

// lostScript prints one line per read of fd 0 and counts the reads in a
// map, whose count no full ring buffer can lose.
const lostScript = `tracepoint:syscalls:sys_enter_read /pid == cpid && args.fd == 0/ { printf("read %d\n", args.count); @n = count(); }`

// stalled is what gtrace printed when its stdout was not read until the
// workload had finished.
type stalled struct {
	stdout, stderr string
}

// runStalled runs gtrace with args and lostScript on a dd that reads
// lostEvents single bytes from /dev/zero and writes them to a file. The
// test reads gtrace's stdout only once the file is complete: dd reads
// byte i before it writes it, so by then every read event has fired,
// while gtrace was blocked writing to a full pipe.
func runStalled(t *testing.T, args ...string) stalled {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmdline := fmt.Sprintf("/usr/bin/dd if=/dev/zero of=%s status=none bs=1 count=%d", out, lostEvents)

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd := exec.Command(harness.Bin(), append(args, "-c", cmdline, "-e", lostScript)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &stderr
	if err := cmd.Start(); err != nil {
		pw.Close()
		t.Fatal(err)
	}
	pw.Close()
	// With an *os.File as stdout, Wait does not read it, so it can run
	// before the test reads.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		cmd.Process.Kill()
		<-exited
	}

	// Wait for dd to write its last byte. The timeout is only there to
	// fail a broken run; the test makes no assertion on time.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if fi, err := os.Stat(out); err == nil && fi.Size() == lostEvents {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("gtrace exited before the workload finished: %v\nstderr:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			kill()
			t.Fatalf("workload did not finish; stderr:\n%s", stderr.String())
		}
	}

	// Now read everything; gtrace must then exit by itself.
	read := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		read <- b
	}()
	var stdout []byte
	select {
	case stdout = <-read:
	case <-time.After(2 * time.Minute):
		kill()
		t.Fatalf("gtrace did not finish writing after the workload ended; stderr:\n%s", stderr.String())
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("gtrace: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		kill()
		t.Fatalf("gtrace did not exit after closing stdout; stderr:\n%s", stderr.String())
	}
	r := stalled{stdout: string(stdout), stderr: stderr.String()}
	harness.CheckNoPanic(t, r.stderr)
	return r
}

var (
	lostLine    = regexp.MustCompile(`^Lost (\d+) events$`)
	totalLine   = regexp.MustCompile(`^WARNING: Total lost event count: (\d+)$`)
	mapCountRow = regexp.MustCompile(`^@n: (\d+)$`)
)

// atoi parses a count matched by a pattern of digits.
func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkLostTotal checks the exit warning: one line on stderr with the
// same total as the per-poll reports.
func checkLostTotal(t *testing.T, stderr string, lost int) {
	t.Helper()
	var totals []int
	for _, l := range strings.Split(stderr, "\n") {
		if m := totalLine.FindStringSubmatch(l); m != nil {
			totals = append(totals, atoi(t, m[1]))
		}
	}
	if len(totals) != 1 || totals[0] != lost {
		t.Errorf("want one %q line with total %d, got %v in stderr:\n%s",
			"WARNING: Total lost event count: N", lost, totals, stderr)
	}
}

func TestLostEventsText(t *testing.T) {
	testutils.RequireRoot(t)
	r := runStalled(t)

	// stdout: one line per event that got through, then the map at exit.
	printed, mapCount := 0, -1
	for _, l := range strings.Split(harness.StripAttaching(r.stdout), "\n") {
		switch m := mapCountRow.FindStringSubmatch(l); {
		case l == "read 1":
			printed++
		case m != nil:
			mapCount = atoi(t, m[1])
		case l == "":
		default:
			t.Errorf("unexpected stdout line %q", l)
		}
	}
	if strings.Contains(r.stdout, "Lost") {
		t.Errorf("text output reports lost events on stdout; bpftrace v0.26 uses stderr")
	}

	// stderr: the attached line, "Lost N events" lines, whose sum is
	// every event that did not get through, and the total at exit.
	lost := 0
	for _, l := range strings.Split(harness.StripAttached(r.stderr), "\n") {
		if m := lostLine.FindStringSubmatch(l); m != nil {
			n := atoi(t, m[1])
			if n == 0 {
				t.Errorf("reported 0 lost events: %q", l)
			}
			lost += n
		} else if l != "" && !totalLine.MatchString(l) {
			t.Errorf("unexpected stderr line %q", l)
		}
	}
	t.Logf("printed %d, lost %d", printed, lost)
	if mapCount != lostEvents {
		t.Errorf("@n = %d, want %d: the map counts every event", mapCount, lostEvents)
	}
	if lost == 0 {
		t.Errorf("no lost events reported although stdout was not read; stderr:\n%s", r.stderr)
	}
	if printed+lost != lostEvents {
		t.Errorf("printed %d + lost %d = %d, want %d", printed, lost, printed+lost, lostEvents)
	}
	checkLostTotal(t, r.stderr, lost)
}

func TestLostEventsJSON(t *testing.T) {
	testutils.RequireRoot(t)
	r := runStalled(t, "-f", "json")

	printed, lost, lostRecords, mapCount := 0, 0, 0, -1
	for _, l := range strings.Split(r.stdout, "\n") {
		if l == "" {
			continue
		}
		var rec struct {
			Type  string          `json:"type"`
			Count *int            `json:"count"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", l, err)
		}
		switch rec.Type {
		case "attached_probes":
		case "printf":
			var s string
			if err := json.Unmarshal(rec.Data, &s); err != nil || s != "read 1\n" {
				t.Errorf("printf record %s", l)
			}
			printed++
		case "lost_events":
			// {"type": "lost_events", "count": N, "data": {"events": N}}
			var data struct {
				Events *int `json:"events"`
			}
			if err := json.Unmarshal(rec.Data, &data); err != nil || data.Events == nil || rec.Count == nil {
				t.Fatalf("lost_events record without count and data.events: %s", l)
			}
			if *rec.Count != *data.Events || *rec.Count <= 0 {
				t.Errorf("lost_events record: count %d, data.events %d", *rec.Count, *data.Events)
			}
			lost += *data.Events
			lostRecords++
		case "map":
			var data map[string]int
			if err := json.Unmarshal(rec.Data, &data); err != nil {
				t.Fatalf("map record %s: %v", l, err)
			}
			mapCount = data["@n"]
		default:
			t.Errorf("unexpected record %s", l)
		}
	}
	t.Logf("printed %d, lost %d in %d records", printed, lost, lostRecords)
	if mapCount != lostEvents {
		t.Errorf("@n = %d, want %d", mapCount, lostEvents)
	}
	if lost == 0 {
		t.Errorf("no lost_events record although stdout was not read; stdout ends:\n%s", tail(r.stdout, 5))
	}
	if printed+lost != lostEvents {
		t.Errorf("printed %d + lost %d = %d, want %d", printed, lost, printed+lost, lostEvents)
	}
	// JSON keeps stderr for the warning only.
	for _, l := range strings.Split(r.stderr, "\n") {
		if l != "" && !totalLine.MatchString(l) {
			t.Errorf("unexpected stderr line %q", l)
		}
	}
	checkLostTotal(t, r.stderr, lost)
}

// TestLostEventsNone checks that nothing is reported when the consumer
// keeps up: every one of the workload's events is printed.
func TestLostEventsNone(t *testing.T) {
	testutils.RequireRoot(t)
	for _, format := range []string{"text", "json"} {
		r := harness.Gtrace(t, "-f", format, "-c", harness.DDOneByte, "-e", harness.ReadsFd0+` { printf("r\n"); }`)
		if r.Code != 0 {
			t.Fatalf("%s: exit code %d, stderr:\n%s", format, r.Code, r.Stderr)
		}
		line := "r"
		if format == "json" {
			line = `{"type": "printf", "data": "r\n"}`
		}
		n := 0
		for _, l := range strings.Split(r.Stdout, "\n") {
			if l == line {
				n++
			}
		}
		if n != 37 {
			t.Errorf("%s: %d lines printed, want 37; stdout:\n%s", format, n, r.Stdout)
		}
		if all := r.Stdout + r.Stderr; strings.Contains(all, "Lost") || strings.Contains(all, "lost") {
			t.Errorf("%s: lost events reported without a loss:\nstdout:\n%s\nstderr:\n%s", format, r.Stdout, r.Stderr)
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

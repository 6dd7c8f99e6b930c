package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// emptyScalarScript prints a key-less count map after clear() and
// delete(), which leave it without an entry; the END marker ends the
// part that is compared: at exit bpftrace 0.17 prints the empty count
// map as "@c: 0" where v0.26, and gtrace, print nothing.
const emptyScalarScript = `BEGIN { @c = count(); clear(@c); }
interval:ms:100 {
	@t++;
	if (@t == 1) { @c = count(); @c = count(); printf("two: "); print(@c); }
	if (@t == 2) { clear(@c); printf("cleared: "); print(@c); }
	if (@t == 3) { delete(@c); printf("deleted: "); print(@c); printf("END\n"); exit(); }
}`

// TestPrintEmptyScalar checks print() of a map without keys that has no
// entry against bpftrace 0.17, byte for byte, in text and JSON: it
// prints the map's zero, "@c: 0", not nothing.
func TestPrintEmptyScalar(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	untilEnd := func(out, end string) string {
		before, _, ok := strings.Cut(out, end)
		if !ok {
			t.Fatalf("no %q in output:\n%s", end, out)
		}
		return before
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			want := harness.Run(t, bpftrace, "-f", format, "-e", emptyScalarScript)
			got := harness.Gtrace(t, "-f", format, "-e", emptyScalarScript)
			if got.Code != 0 || want.Code != 0 {
				t.Fatalf("exit codes: gtrace %d, bpftrace %d\ngtrace stderr:\n%s", got.Code, want.Code, got.Stderr)
			}
			w, g := want.Stdout, got.Stdout
			if format == "text" {
				w, g = untilEnd(harness.StripAttaching(w), "END\n"), untilEnd(harness.StripAttaching(g), "END\n")
			} else {
				// gtrace's attached_probes line carries a "count" field
				// (v0.26): compare the map lines.
				end := `{"type": "printf", "data": "END\n"}`
				w, g = mapLines(untilEnd(w, end)), mapLines(untilEnd(g, end))
			}
			if g != w {
				t.Errorf("gtrace:\n%s\nbpftrace 0.17:\n%s", g, w)
			}
			if !strings.Contains(g, `"@c": 0`) && !strings.Contains(g, "cleared: @c: 0\n") {
				t.Errorf("no empty map printed as 0:\n%s", g)
			}
		})
	}
}

// mapLines keeps the JSON lines of printed maps.
func mapLines(out string) string {
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, `{"type": "map"`) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// TestPidpersec runs Debian's pidpersec.bt, whose count map is cleared
// every second: a second without a fork must still print a whole line.
func TestPidpersec(t *testing.T) {
	testutils.RequireRoot(t)
	const tool = "/usr/sbin/pidpersec.bt"
	if _, err := os.Stat(tool); err != nil {
		t.Fatalf("%s (Debian's bpftrace package) is needed: %v", tool, err)
	}
	r := harness.Gtrace(t, "-c", "/bin/sleep 2.5", tool)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	line := regexp.MustCompile(`^\d\d:\d\d:\d\d PIDs/sec: @: \d+$`)
	n := 0
	for _, l := range strings.Split(harness.StripAttaching(r.Stdout), "\n") {
		if l == "" || strings.HasPrefix(l, "Tracing new processes") {
			continue
		}
		if !line.MatchString(l) {
			t.Errorf("broken line %q in:\n%s", l, r.Stdout)
		}
		n++
	}
	if n < 2 {
		t.Errorf("%d lines in 2.5 s, want 2:\n%s", n, r.Stdout)
	}
}

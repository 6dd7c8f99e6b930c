package runtime

import (
	"bytes"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gtrace/internal/testutils"
	"gtrace/output"
)

// runPrinting runs src as runScript does, printing text or JSON.
func runPrinting(t *testing.T, src string, json bool) string {
	t.Helper()
	out := compile(t, src)
	var stdout, stderr bytes.Buffer
	var p output.Printer = output.NewText(&stdout, &stderr)
	if json {
		p = output.NewJSON(&stdout)
	}
	if _, err := Run(out, &Options{Printer: p, Stderr: &stderr, Quiet: true}); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// TestKeylessAggregations checks what the key-less aggregations print,
// which live in per-CPU arrays, but for the deleted ones: what their
// hash maps printed, and bpftrace 0.17 where it agrees (not the format
// of stats, nor print() of a sum, min, max, avg or stats map with no
// value, which bpftrace leaves empty).
func TestKeylessAggregations(t *testing.T) {
	testutils.RequireRoot(t)
	const (
		write    = "@a = count(); @b = sum(0); @c = min(-5); @d = max(3); @e = avg(4); @f = stats(7); "
		printAll = "print(@a); print(@b); print(@c); print(@d); print(@e); print(@f); "
		// What print() shows of maps with no value, or zeroed.
		zeros     = "@a: 0\n@b: 0\n@c: 0\n@d: 0\n@e: 0\n@f: { .count = 0, .average = 0, .total = 0 }\n"
		zerosJSON = `{"type": "map", "data": {"@a": 0}}
{"type": "map", "data": {"@b": 0}}
{"type": "map", "data": {"@c": 0}}
{"type": "map", "data": {"@d": 0}}
{"type": "stats", "data": {"@e": 0}}
{"type": "stats", "data": {"@f": {"count": 0, "average": 0, "total": 0}}}
`
		// What exit prints of empty avg and stats maps in JSON.
		emptyJSON = `{"type": "stats", "data": {"@e": {}}}
{"type": "stats", "data": {"@f": {}}}
`
	)
	tests := []struct {
		name, src, text, json string
	}{
		{"written", "BEGIN { " + write + "exit(); }",
			"\n\n@a: 1\n@b: 0\n@c: -5\n@d: 3\n@e: 4\n@f: { .count = 1, .average = 7, .total = 7 }\n",
			`{"type": "map", "data": {"@a": 1}}
{"type": "map", "data": {"@b": 0}}
{"type": "map", "data": {"@c": -5}}
{"type": "map", "data": {"@d": 3}}
{"type": "stats", "data": {"@e": 4}}
{"type": "stats", "data": {"@f": {"count": 1, "average": 7, "total": 7}}}
`},
		{"accumulated", `BEGIN { @a = count(); @a = count(); @b = sum(5); @b = sum(-5); @c = min(4); @c = min(-3);
			@d = max(-4); @d = max(-9); @e = avg(3); @e = avg(4); @f = stats(2); @f = stats(-6); exit(); }`,
			"\n\n@a: 2\n@b: 0\n@c: -3\n@d: -4\n@e: 3\n@f: { .count = 2, .average = -2, .total = -4 }\n",
			`{"type": "map", "data": {"@a": 2}}
{"type": "map", "data": {"@b": 0}}
{"type": "map", "data": {"@c": -3}}
{"type": "map", "data": {"@d": -4}}
{"type": "stats", "data": {"@e": 3}}
{"type": "stats", "data": {"@f": {"count": 2, "average": -2, "total": -4}}}
`},
		{"never written", "BEGIN { " + printAll + "if (pid == 0) { " + write + "} exit(); }",
			zeros + "\n\n", zerosJSON + emptyJSON},
		{"clear", "BEGIN { " + write + "clear(@a); clear(@b); clear(@c); clear(@d); clear(@e); clear(@f); " + printAll + "exit(); }",
			zeros + "\n\n", zerosJSON + emptyJSON},
		{"zero", "BEGIN { " + write + "zero(@a); zero(@b); zero(@c); zero(@d); zero(@e); zero(@f); " + printAll + "exit(); }",
			zeros + "\n\n" + zeros, zerosJSON + zerosJSON},
		{"delete", "BEGIN { " + write + "delete(@a); delete(@b); delete(@c); delete(@d); delete(@e); delete(@f); " + printAll + "exit(); }",
			zeros + "\n\n", zerosJSON + emptyJSON},
		// END runs once the events of clear() and zero() are done.
		{"written again", "BEGIN { " + write + `clear(@a); clear(@b); clear(@c); zero(@d); zero(@e); zero(@f); exit(); }
			END { @a = count(); @b = sum(0); @c = min(8); @d = max(-2); @e = avg(6); @f = stats(1); }`,
			"\n\n@a: 1\n@b: 0\n@c: 8\n@d: -2\n@e: 6\n@f: { .count = 1, .average = 1, .total = 1 }\n",
			`{"type": "map", "data": {"@a": 1}}
{"type": "map", "data": {"@b": 0}}
{"type": "map", "data": {"@c": 8}}
{"type": "map", "data": {"@d": -2}}
{"type": "stats", "data": {"@e": 6}}
{"type": "stats", "data": {"@f": {"count": 1, "average": 1, "total": 1}}}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runPrinting(t, tt.src, false); got != tt.text {
				t.Errorf("text: got:\n%q\nwant:\n%q", got, tt.text)
			}
			if got := runPrinting(t, tt.src, true); got != tt.json {
				t.Errorf("JSON: got:\n%s\nwant:\n%s", got, tt.json)
			}
		})
	}
}

// TestKeylessAcrossCPUs checks that min and max merge over CPUs: each
// CPU makes system calls, and the least and greatest CPU numbers win.
func TestKeylessAcrossCPUs(t *testing.T) {
	testutils.RequireRoot(t)
	n := goruntime.NumCPU()
	if n < 2 {
		testutils.Skip(t, "needs two CPUs")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for cpu := range n {
		wg.Go(func() {
			goruntime.LockOSThread()
			defer goruntime.UnlockOSThread()
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				t.Error(err)
				return
			}
			for {
				select {
				case <-stop:
					return
				default:
					unix.Getppid()
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	got := runPrinting(t, `tracepoint:syscalls:sys_enter_getppid { @mn = min(cpu); @mx = max(cpu); @n = count(); }
		interval:ms:300 { exit(); }`, false)
	close(stop)
	wg.Wait()
	for _, want := range []string{"\n@mn: 0\n", fmt.Sprintf("\n@mx: %d\n", n-1), "\n@n: "} {
		if !strings.Contains(got, want) {
			t.Errorf("got:\n%s\nwant %q in it", got, want)
		}
	}
}

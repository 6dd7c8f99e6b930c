package bench

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

func TestParseScripts(t *testing.T) {
	tests := []struct {
		list    string
		want    []int
		wantErr string
	}{
		{"", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, ""},
		{"4", []int{4}, ""},
		{"2,4,9-12", []int{2, 4, 9, 10, 11, 12}, ""},
		{"18-18", []int{18}, ""},
		{"3,2-4", []int{3, 2, 4}, ""},
		{"0", nil, `no script "0"`},
		{"19", nil, `no script "19"`},
		{"x", nil, `no script "x"`},
		{"5-3", nil, "runs backwards"},
	}
	for _, tt := range tests {
		got, err := ParseScripts(tt.list)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseScripts(%q): error %v, want %q", tt.list, err, tt.wantErr)
			}
			continue
		}
		var ns []int
		for _, s := range got {
			ns = append(ns, s.N)
		}
		if err != nil || !reflect.DeepEqual(ns, tt.want) {
			t.Errorf("ParseScripts(%q) = %v, %v; want %v", tt.list, ns, err, tt.want)
		}
	}
}

func TestScriptSource(t *testing.T) {
	s := Scripts[15] // timing: entry and return
	if got := s.Source(true); got != s.src {
		t.Errorf("with kprobes: %q", got)
	}
	want := `t:syscalls:sys_enter_read { @s[tid] = nsecs } t:syscalls:sys_exit_read /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }`
	if got := s.Source(false); got != want {
		t.Errorf("on tracepoints:\n%s\nwant\n%s", got, want)
	}
	if got := Scripts[14].Source(false); got != `t:syscalls:sys_enter_read { @ = hist(args->count) }` {
		t.Errorf("histogram on tracepoints: %q", got)
	}
	for _, s := range Scripts {
		if s.Uprobe() != (s.N == 6 || s.N == 7) {
			t.Errorf("script %d: Uprobe() = %v", s.N, s.Uprobe())
		}
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in, name string
		args     []string // after the program, for script "S"
		wantErr  string
	}{
		{"sh", "sh", []string{"S"}, ""},
		{"t=sh -c {}", "t", []string{"-c", "S"}, ""},
		{"t=sh -x", "t", []string{"-x", "S"}, ""},
		{"=sh", "", nil, "want NAME=COMMAND"},
		{"t=", "", nil, "want NAME=COMMAND"},
		{"floor=sh", "", nil, "always runs"},
		{"t=/no/such/tracer", "", nil, "tracer t"},
	}
	for _, tt := range tests {
		c, err := ParseCommand(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCommand(%q): error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || c.Name != tt.name || !reflect.DeepEqual(c.args("S"), tt.args) || !strings.HasSuffix(c.Argv[0], "/sh") {
			t.Errorf("ParseCommand(%q) = %+v (args %q), %v", tt.in, c, c.args("S"), err)
		}
	}
}

func TestBestOf(t *testing.T) {
	var b *sample
	for _, m := range []sample{
		{wall: 30, kernel: 0, runs: 0, lost: 1},
		{wall: 20, kernel: 90, runs: 100, lost: 2},
		{wall: 25, kernel: 80, runs: 99},
		{wall: 40, kernel: 85, runs: 101, lost: 3},
	} {
		b = bestOf(b, m)
	}
	if want := (sample{wall: 20, kernel: 80, runs: 99, lost: 6}); *b != want {
		t.Errorf("bestOf = %+v, want %+v", *b, want)
	}
}

func TestPerRun(t *testing.T) {
	before := []ebpf.ProgramStats{{RunCount: 10, Runtime: 1000}, {RunCount: 5, Runtime: 500}, {RunCount: 1, Runtime: 7}}
	after := []ebpf.ProgramStats{{RunCount: 110, Runtime: 6000}, {RunCount: 105, Runtime: 3500}, {RunCount: 1, Runtime: 7}}
	// An entry and a return probe: 8000 ns over 100 events.
	if ns, runs := perRun(before, after); ns != 80 || runs != 100 {
		t.Errorf("perRun = %v ns, %d runs; want 80, 100", ns, runs)
	}
	if ns, runs := perRun(after, after); ns != 0 || runs != 0 {
		t.Errorf("perRun of nothing = %v, %d", ns, runs)
	}
	if ns, runs := perRun(nil, nil); ns != 0 || runs != 0 {
		t.Errorf("perRun of no program = %v, %d", ns, runs)
	}
}

// testResult is a run of two scripts under the floor, gtrace and bpftrace.
func testResult() *OverheadResult {
	return &OverheadResult{
		Date: "2026-11-23", Kernel: "6.18", CPUs: 2, Events: 1000, Runs: 3,
		Tracers: []string{"floor", "gtrace", "bpftrace"}, BaselineNs: 200,
		Points: []Point{
			{Script: 9, Name: "map", Tracer: "floor", WholeNs: 50, Slowdown: 0.25, KernelNs: 32, Runs: 1000, EventRate: 4e6},
			{Script: 9, Name: "map", Tracer: "gtrace", WholeNs: 60, Slowdown: 0.3, KernelNs: 40, Runs: 1000, EventRate: 4e6},
			{Script: 9, Name: "map", Tracer: "bpftrace", WholeNs: 120, Slowdown: 0.6, KernelNs: 38, Runs: 1000, EventRate: 3e6},
			{Script: 18, Name: "per-event printf", Tracer: "floor", WholeNs: 280, Slowdown: 1.4, KernelNs: 266, Runs: 1000, EventRate: 2e6},
			{Script: 18, Name: "per-event printf", Tracer: "gtrace", WholeNs: 261, Slowdown: 1.3, KernelNs: 456, Runs: 1000, EventRate: 2.1e6},
			{Script: 18, Name: "per-event printf", Tracer: "bpftrace", WholeNs: 8638, Slowdown: 43, KernelNs: 8567, Runs: 1000, EventRate: 112908, Lost: 7},
		},
	}
}

func TestWriteOverheadTable(t *testing.T) {
	var b strings.Builder
	if err := WriteOverheadTable(&b, testResult()); err != nil {
		t.Fatal(err)
	}
	want := `Overhead per event: dd if=/dev/zero of=/dev/null bs=1 count=1000, best of 3 runs
2026-11-23, Linux 6.18, 2 CPUs; syscalls:sys_enter_read and sys_exit_read in place of vfs_read (--kprobes: vfs_read)
untraced: 200 ns per event; whole: extra wall time of the traced workload per event; in-kernel: run_time_ns / run_cnt

   #            script    tracer  whole ns  slowdown  / floor  / gtrace  in-kernel ns  / floor  / gtrace  lost
  09               map     floor        50     25.0%    1.00×     0.83×            32    1.00×     0.80×     0
  09               map    gtrace        60     30.0%    1.20×     1.00×            40    1.25×     1.00×     0
  09               map  bpftrace       120     60.0%    2.40×     2.00×            38    1.19×     0.95×     0
  18  per-event printf     floor       280    140.0%    1.00×     1.07×           266    1.00×     0.58×     0
  18  per-event printf    gtrace       261    130.0%    0.93×     1.00×           456    1.71×     1.00×     0
  18  per-event printf  bpftrace      8638   4300.0%   30.85×    33.10×          8567   32.21×    18.79×     7

printf, floor: no event lost at 2000000 events/s
printf, gtrace: no event lost at 2100000 events/s
printf, bpftrace: 7 events lost at 112908 events/s: loss begins at or below that rate
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, testResult()); err != nil {
		t.Fatal(err)
	}
	var got OverheadResult
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.Bytes())
	}
	if !reflect.DeepEqual(&got, testResult()) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, *testResult())
	}
	for _, key := range []string{`"whole_ns_per_event": 8638`, `"kernel_ns_per_event": 456`, `"baseline_ns_per_event": 200`} {
		if !strings.Contains(b.String(), key) {
			t.Errorf("no %s in\n%s", key, b.String())
		}
	}
}

func TestWriteOverheadSVG(t *testing.T) {
	var b bytes.Buffer
	if err := WriteOverheadSVG(&b, testResult()); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, with a bar per point and measure.
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	bars := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not XML: %v", err)
			}
			break
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "title" {
			bars++
		}
	}
	if want := 2 * len(testResult().Points); bars != want {
		t.Errorf("%d bars, want %d", bars, want)
	}
	if !strings.Contains(b.String(), "18 per-event printf, bpftrace: 8638 ns") {
		t.Errorf("no bar for bpftrace's printf:\n%s", b.String())
	}
}

func TestWriteAttachTable(t *testing.T) {
	r := &AttachResult{Date: "2026-11-23", Kernel: "6.18", Runs: 2, Tracers: []string{"gtrace", "bpftrace"},
		Points: []AttachPoint{
			{Probes: "first 1 of tracepoint", N: 1, Tracer: "gtrace", Start: 5 * time.Millisecond, Attach: time.Millisecond, Detach: 20 * time.Millisecond},
			{Probes: "first 1 of tracepoint", N: 1, Tracer: "bpftrace", Start: 300 * time.Millisecond, Attach: 2 * time.Millisecond, Detach: 120 * time.Millisecond},
		}}
	var b strings.Builder
	if err := WriteAttachTable(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `Attach and detach, best of 2 runs; 2026-11-23, Linux 6.18
start: exec to the Attaching line; attach: to the last descriptor opened; detach: SIGINT to exit

                 probes  N    tracer     start   attach    detach  start / gtrace  attach / gtrace  detach / gtrace
  first 1 of tracepoint  1    gtrace   5.00 ms  1.00 ms   20.0 ms           1.00×            1.00×            1.00×
  first 1 of tracepoint  1  bpftrace  300.0 ms  2.00 ms  120.0 ms          60.00×            2.00×            6.00×
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

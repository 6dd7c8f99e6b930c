package flow

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"gtrace/calltrace"
	"gtrace/output"
)

func TestScript(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		// want are lines of the script; err, its error.
		want []string
		err  string
	}{
		{name: "child, kprobes, defaults", opts: Options{Probes: Kprobe},
			want: []string{
				"tracepoint:raw_syscalls:sys_enter /pid == cpid/ {",
				"\tprint((0, nsecs, cpu, tid, args.id, pid, comm));",
				"tracepoint:raw_syscalls:sys_exit /@flow[tid]/ {",
				"kprobe:vfs_*,", "kprobe:submit_bio* /@flow[tid]/ {",
				"kretprobe:vfs_*,", "kretprobe:submit_bio* /@flow[tid]/ {",
				"\tprint((3, nsecs, cpu, tid, func));",
			}},
		{name: "pid, fentry, syscalls, globs", opts: Options{Pid: 42, Probes: Fentry,
			Syscalls: []string{"read", "pread64"}, Funcs: []string{"vfs_*,filemap_read", "ext4:ext4_*"}},
			want: []string{
				"tracepoint:raw_syscalls:sys_enter /pid == 42 && (args.id == 0 || args.id == 17)/ {",
				"fentry:vfs_*,", "fentry:filemap_read,", "fentry:ext4:ext4_* /@flow[tid]/ {",
				"fexit:vfs_*,", "fexit:ext4:ext4_* /@flow[tid]/ {",
			}},
		{name: "unknown syscall", opts: Options{Probes: Kprobe, Syscalls: []string{"reed"}},
			err: `unknown system call "reed"`},
		{name: "bad glob", opts: Options{Probes: Kprobe, Funcs: []string{"vfs_read/ { exit(); }"}},
			err: `invalid function glob "vfs_read/ { exit(); }"`},
		{name: "empty glob", opts: Options{Probes: Kprobe, Funcs: []string{"vfs_read,"}},
			err: `invalid function glob ""`},
		{name: "no probes", opts: Options{}, err: "no way to probe kernel functions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := Script(tt.opts)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(src, "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("no line %q in\n%s", w, src)
				}
			}
		})
	}
}

// event is one tuple as the script sends it.
func event(kind, ts, cpu, tid uint64, what output.Value, more ...output.Value) output.Value {
	return output.Tuple(append([]output.Value{output.Int(int64(kind)), output.Uint(ts), output.Uint(cpu), output.Uint(tid), what}, more...)...)
}

func enterRead(ts, tid uint64) output.Value {
	return event(syscallEntry, ts, 1, tid, output.Int(0), output.Uint(tid), output.Str("dd"))
}

func TestRecorder(t *testing.T) {
	fn := func(name string) output.Value { return output.Sym(name, 0xffffffff81000000) }
	tests := []struct {
		name   string
		events []output.Value
		lines  string
		graph  string
	}{
		{name: "nested calls",
			events: []output.Value{
				enterRead(1000, 7),
				event(funcEntry, 2000, 1, 7, fn("vfs_read")),
				event(funcEntry, 2500, 1, 7, output.Str("filemap_read")),
				event(funcReturn, 4000, 1, 7, output.Str("filemap_read")),
				event(funcReturn, 5000, 0, 7, fn("vfs_read")),
				event(syscallReturn, 6000, 0, 7, output.Int(0)),
			},
			lines: `CPU     TID     DURATION  FUNCTION
  1       7               => read
  1       7                 -> vfs_read
  1       7                   -> filemap_read
  1       7     1.500 us      <- filemap_read
  0       7     3.000 us    <- vfs_read
  0       7     5.000 us  <= read
`,
			graph: `# TOTAL TIME   FUNCTION
  5.000 us : (1) read
  3.000 us : (1) vfs_read
  1.500 us : (1) filemap_read
`},
		{name: "two threads, a missed return, a stray return",
			events: []output.Value{
				event(funcReturn, 500, 0, 9, fn("vfs_read")), // before tracing began
				enterRead(1000, 7),
				enterRead(1100, 8),
				event(funcEntry, 1200, 1, 7, fn("vfs_read")),
				event(funcEntry, 1300, 1, 8, fn("vfs_read")),
				event(funcEntry, 1400, 1, 8, fn("touch_atime")),
				event(funcReturn, 1500, 1, 8, fn("vfs_read")), // touch_atime's return missed
				event(syscallReturn, 1600, 1, 8, output.Int(0)),
				event(funcReturn, 1700, 1, 7, fn("vfs_read")),
				event(syscallReturn, 2000, 1, 7, output.Int(0)),
			},
			lines: `CPU     TID     DURATION  FUNCTION
  1       7               => read
  1       8               => read
  1       7                 -> vfs_read
  1       8                 -> vfs_read
  1       8                   -> touch_atime
  1       8     0.200 us    <- vfs_read
  1       8     0.500 us  <= read
  1       7     0.500 us    <- vfs_read
  1       7     1.000 us  <= read
`,
			graph: `# TOTAL TIME   FUNCTION
  1.500 us : (2) read
  0.700 us : (2) vfs_read
  0.000 us : (1) touch_atime
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines, stderr strings.Builder
			r := NewRecorder(&lines, &stderr)
			for _, e := range tt.events {
				if err := r.Value(e); err != nil {
					t.Fatal(err)
				}
			}
			if lines.String() != tt.lines {
				t.Errorf("lines\n%s\nwant\n%s", lines.String(), tt.lines)
			}
			var graph strings.Builder
			if err := calltrace.WriteGraph(&graph, r.Recording().Graph()); err != nil {
				t.Fatal(err)
			}
			if graph.String() != tt.graph {
				t.Errorf("graph\n%s\nwant\n%s", graph.String(), tt.graph)
			}
			var chrome bytes.Buffer
			if err := r.Recording().WriteChrome(&chrome); err != nil {
				t.Fatal(err)
			}
			if err := calltrace.Check(&chrome); err != nil {
				t.Errorf("the Chrome trace does not check: %v", err)
			}
		})
	}
}

func TestRecorderBadEvents(t *testing.T) {
	tests := []struct {
		name  string
		event output.Value
		err   string
	}{
		{"not a tuple", output.Uint(1), "want at least 5 elements"},
		{"short", output.Tuple(output.Uint(1), output.Uint(2)), "want at least 5 elements"},
		{"not a number", event(0, 1, 1, 1, output.Int(0)).Elems()[0], "want at least 5 elements"},
		{"text time", output.Tuple(output.Int(2), output.Str("x"), output.Uint(0), output.Uint(1), output.Str("f")), "element 1 is not a number"},
		{"unknown kind", event(9, 1, 1, 7, output.Str("f")), "unknown kind 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(nil, &strings.Builder{})
			if err := r.Value(enterRead(0, 7)); err != nil {
				t.Fatal(err)
			}
			err := r.Value(tt.event)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

// TestWriteFlow replays a recording saved in the Chrome Trace format.
func TestWriteFlow(t *testing.T) {
	r := NewRecorder(nil, &strings.Builder{})
	for _, e := range []output.Value{
		enterRead(1000, 7),
		event(funcEntry, 2000, 1, 7, output.Str("vfs_read")),
		event(funcEntry, 2500, 1, 7, output.Str("touch_atime")),
		event(funcReturn, 4000, 0, 7, output.Str("vfs_read")),
		event(syscallReturn, 6000, 0, 7, output.Int(0)),
		enterRead(7000, 7),
	} {
		if err := r.Value(e); err != nil {
			t.Fatal(err)
		}
	}
	var chrome bytes.Buffer
	if err := r.Recording().WriteChrome(&chrome); err != nil {
		t.Fatal(err)
	}
	back, err := calltrace.ReadChrome(&chrome)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	if err := WriteFlow(&got, back); err != nil {
		t.Fatal(err)
	}
	want := `CPU     TID     DURATION  FUNCTION
  1       7               => read
  1       7                 -> vfs_read
  1       7                   -> touch_atime
  1       7            -      <- touch_atime
  1       7     2.000 us    <- vfs_read
  1       7     5.000 us  <= read
  1       7               => read
  1       7            -  <= read
`
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
}

// TestRecorderForget checks that a Recorder that forgets keeps only the
// calls under way, and prints the same lines.
func TestRecorderForget(t *testing.T) {
	var lines strings.Builder
	r := NewRecorder(&lines, &strings.Builder{})
	r.Forget = true
	for _, e := range []output.Value{
		enterRead(1000, 7),
		event(funcEntry, 2000, 1, 7, output.Str("vfs_read")),
		event(funcReturn, 3000, 1, 7, output.Str("vfs_read")),
		event(syscallReturn, 4000, 1, 7, output.Int(0)),
		enterRead(5000, 7),
		event(funcEntry, 6000, 1, 7, output.Str("vfs_read")),
	} {
		if err := r.Value(e); err != nil {
			t.Fatal(err)
		}
	}
	var kept []string
	r.Recording().Tracks[0].Walk(func(c *calltrace.Call, depth int) {
		kept = append(kept, fmt.Sprintf("%s@%d", c.Func, c.Entry))
	})
	if want := "read@5000 vfs_read@6000"; strings.Join(kept, " ") != want {
		t.Errorf("kept %q, want %s", kept, want)
	}
	if n := strings.Count(lines.String(), "\n"); n != 7 {
		t.Errorf("%d lines, want a header and 6:\n%s", n, lines.String())
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gtrace/flow"
	"gtrace/internal/testutils"
	"gtrace/kernel"
	"gtrace/output"
)

func TestParseFlow(t *testing.T) {
	tests := []struct {
		args []string
		want flowOptions
		err  string
	}{
		{args: []string{"-c", "dd if=x", "--syscall", "read,pread64", "--syscall", "write", "vfs_*,filemap_read", "blkdev_*"},
			want: flowOptions{command: "dd if=x", syscalls: []string{"read", "pread64", "write"},
				funcs: []string{"vfs_*", "filemap_read", "blkdev_*"}}},
		{args: []string{"vfs_read", "--pid", "42", "--graph", "-o", "f.json"},
			want: flowOptions{pid: 42, graph: true, outFile: "f.json", funcs: []string{"vfs_read"}}},
		{args: []string{"--from", "f.json", "--graph"}, want: flowOptions{from: "f.json", graph: true}},
		{args: []string{"--serve", "127.0.0.1:0", "f.json"}, want: flowOptions{serve: "127.0.0.1:0", from: "f.json"}},
		{args: []string{"--serve=:8080", "f.json"}, want: flowOptions{serve: ":8080", from: "f.json"}},
		{args: []string{"--serve", ":8080", "-c", "ls", "f.json"}, err: "--serve serves a saved flow: gtrace flow --serve ADDR FILE"},
		{args: []string{"--serve", ":8080"}, err: "--serve serves a saved flow: gtrace flow --serve ADDR FILE"},
		{args: []string{"vfs_read"}, err: "a process to follow is needed: -c CMD or -p PID"},
		{args: []string{"-c", "ls", "-p", "1"}, err: "-c and -p can not both be given"},
		{args: []string{"--from", "f.json", "-c", "ls"}, err: "--from prints a saved flow: it takes only --graph"},
		{args: []string{"-c", "ls", "vfs_read;"}, err: `invalid function glob "vfs_read;"`},
		{args: []string{"-p", "x"}, err: "Failed to parse pid"},
		{args: []string{"-c", "ls", "--frobnicate"}, err: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parseFlow(tt.args)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// TestFlowNeedsKprobesOrFentry runs gtrace flow where the kernel has
// neither kprobes nor fentry, as this machine's: it must say so. The
// flows themselves run in tests/vm.
func TestFlowNeedsKprobesOrFentry(t *testing.T) {
	testutils.RequireRoot(t)
	if kernel.HasKprobes() {
		testutils.Skip(t, "this kernel has kprobes; tests/vm runs gtrace flow")
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"flow", "-c", "true", "vfs_read"}, &stdout, &stderr)
	if code != 1 || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, want 1 and nothing", code, stdout.String())
	}
	for _, want := range []string{"gtrace flow needs kprobes or fentry", "CONFIG_KPROBES is off", "an fentry program does not load"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q does not say %q", stderr.String(), want)
		}
	}
}

// TestFlowFrom prints a flow saved with -o, as lines and as a graph.
func TestFlowFrom(t *testing.T) {
	rec := flow.NewRecorder(nil, &bytes.Buffer{})
	for _, e := range [][]output.Value{
		{output.Int(0), output.Uint(1000), output.Uint(0), output.Uint(7), output.Int(0), output.Uint(7), output.Str("dd")},
		{output.Int(2), output.Uint(2000), output.Uint(0), output.Uint(7), output.Str("vfs_read")},
		{output.Int(3), output.Uint(3000), output.Uint(0), output.Uint(7), output.Str("vfs_read")},
		{output.Int(1), output.Uint(4000), output.Uint(0), output.Uint(7), output.Int(0)},
	} {
		if err := rec.Value(output.Tuple(e...)); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "flow.json")
	var saved bytes.Buffer
	if err := rec.Recording().WriteChrome(&saved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, saved.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"flow", "--from", file}, `CPU     TID     DURATION  FUNCTION
  0       7               => read
  0       7                 -> vfs_read
  0       7     1.000 us    <- vfs_read
  0       7     3.000 us  <= read
`},
		{[]string{"flow", "--graph", "--from", file}, `# TOTAL TIME   FUNCTION
  3.000 us : (1) read
  1.000 us : (1) vfs_read
`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if stdout.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", stdout.String(), tt.want)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"flow", "--from", "flow_test.go"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "flow_test.go: read trace") {
		t.Errorf("a file that is no trace: exit %d, stderr %q", code, stderr.String())
	}
}

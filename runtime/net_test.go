package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gtrace/compiler"
	"gtrace/internal/testutils"
	"gtrace/output"
	"gtrace/symbol"
)

// runMessages runs src and returns what it printed to stdout and stderr.
func runMessages(t *testing.T, src string, noWarnings bool) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts := &Options{Printer: output.NewText(&stdout, &stderr), Stderr: &stderr, Quiet: true, NoWarnings: noWarnings}
	if _, err := Run(compile(t, src), opts); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

func TestNetHelpers(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, src, want string }{
		{"pton v4", `BEGIN { printf("%s %x\n", ntop(pton("127.0.0.1")), (uint32)pton("127.0.0.1")); }`, "127.0.0.1 100007f\n"},
		{"pton v6", `BEGIN { printf("%s\n", ntop(pton("fe80::1:2"))); print(pton("10.0.0.255")); }`, "fe80::1:2\n[10,0,0,-1]\n"},
		{"macaddr", `BEGIN { printf("%s\n", macaddr(pton("5:403:201:a0ff::"))); }`, "00:05:04:03:02:01\n"},
		{"macaddr key and value", `BEGIN { $m = macaddr(pton("102:304:506::")); @k[$m] = 1; @v[1] = $m; exit(); }`,
			"@k[01:02:03:04:05:06]: 1\n@v[1]: 01:02:03:04:05:06\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Maps print at exit after blank lines.
			got, _ := runScript(t, tt.src)
			if got = strings.TrimSpace(got) + "\n"; got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCgroupPath resolves BEGIN's cgroup, which is the test's own: the
// program runs in the process that runs it.
func TestCgroupPath(t *testing.T) {
	testutils.RequireRoot(t)
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		testutils.Skip(t, "no /proc/self/cgroup")
	}
	var want string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			want = "unified:" + p
		}
	}
	if want == "" || !hasCgroup2() {
		testutils.Skip(t, "no cgroup2 hierarchy")
	}
	got, _ := runScript(t, `BEGIN { printf("%s|", cgroup_path(cgroup, "unif*")); printf("%s|", cgroup_path(cgroup, "none")); }`)
	if got, want = strings.TrimSpace(got), want+"||"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func hasCgroup2() bool {
	for _, r := range cgroupRoots() {
		if r.name == "unified" {
			return true
		}
	}
	return false
}

func TestWildcard(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "unified", true},
		{"unified", "unified", true},
		{"uni*", "unified", true},
		{"*fied", "unified", true},
		{"u*i*d", "unified", true},
		{"cpu", "cpuacct", false},
		{"cpu*", "cpuacct", true},
		{"a*a", "a", false},
		{"*x*", "unified", false},
	}
	for _, tt := range tests {
		if got := wildcard(tt.pattern, tt.name); got != tt.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestMessages(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name, src  string
		noWarnings bool
		want       string
	}{
		{"errorf", `BEGIN { errorf("bad: %d, %s", 10, "arg2"); }`, false, "stdin:1:9-42: ERROR: bad: 10, arg2\n"},
		{"length modifiers", `BEGIN { $x = 0x12345678abcdef; warnf("%hhx %hx %x %jx\n", $x, $x, $x, $x); }`, false,
			"stdin:1:32-74: WARNING: ef cdef 78abcdef 12345678abcdef\n"},
		{"macro", `macro bad() { errorf("Something bad"); } BEGIN { bad(); }`, false,
			"stdin:1:15-38: ERROR: Something bad\nstdin:1:50-55: ERROR: expanded from\n" +
				"macro bad() { errorf(\"Something bad\"); } BEGIN { bad(); }\n" +
				"                                                 ~~~~~\n"},
		{"no warnings", `BEGIN { warnf("no warn"); errorf("an error"); }`, true, "stdin:1:27-45: ERROR: an error\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := runMessages(t, tt.src, tt.noWarnings); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestDebugf finds debugf()'s line in the kernel's trace buffer.
func TestDebugf(t *testing.T) {
	testutils.RequireRoot(t)
	trace := "/sys/kernel/tracing/trace"
	if _, err := os.Stat(trace); err != nil {
		testutils.Skip(t, "no tracefs at /sys/kernel/tracing")
	}
	token := fmt.Sprintf("gtrace-debugf-%d", time.Now().UnixNano())
	runScript(t, `BEGIN { debugf("`+token+` %s %d %x", "a", 1, 16); }`)
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bpf_trace_printk: " + token + " a 1 10"; !strings.Contains(string(b), want) {
		t.Errorf("the trace buffer has no %q", want)
	}
}

// TestPercpuKaddr reads a per-CPU counter where the kernel lists its
// variables in kallsyms, and checks the error elsewhere.
func TestPercpuKaddr(t *testing.T) {
	testutils.RequireRoot(t)
	src := `BEGIN { $p = percpu_kaddr("process_counts", 0); printf("%d %d\n", $p != 0, *percpu_kaddr("process_counts") >= 0); }`
	if _, ok := (&symbol.Kernel{}).Addr("process_counts"); !ok {
		_, err := compiler.Compile([]byte(src), nil)
		if err == nil || !strings.Contains(err.Error(), "the kernel does not list process_counts in /proc/kallsyms") {
			t.Errorf("got %v, want the error on kallsyms", err)
		}
		return
	}
	if got, _ := runScript(t, src); got != "1 1\n" {
		t.Errorf("got %q", got)
	}
}

// TestSkbOutput captures packets of TCP connections to localhost into a
// pcap file.
func TestSkbOutput(t *testing.T) {
	testutils.RequireRoot(t)
	path := filepath.Join(t.TempDir(), "out.pcap")
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				if c, err := net.Dial("tcp", "127.0.0.1:1"); err == nil {
					c.Close()
				}
			}
		}
	}()
	got, _ := runScript(t, `rawtracepoint:consume_skb { $r = skboutput("`+path+`", (struct sk_buff *)arg0, 20, 4); if ($r == 0) { exit(); } }`)
	if strings.TrimSpace(got) != "" {
		t.Errorf("printed %q", got)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 24+16 {
		t.Fatalf("pcap file of %d bytes", len(b))
	}
	if magic, link := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[20:]); magic != 0xa1b2c3d4 || link != 101 {
		t.Errorf("header: magic %#x, link type %d", magic, link)
	}
	rec := b[24:]
	caplen, length := binary.LittleEndian.Uint32(rec[8:]), binary.LittleEndian.Uint32(rec[12:])
	if caplen != 16 || length != 16 || len(rec) < 16+16 {
		t.Errorf("first packet: caplen %d, len %d, %d bytes", caplen, length, len(rec)-16)
	}
	if at := time.Unix(int64(binary.LittleEndian.Uint32(rec)), 0); time.Since(at).Abs() > time.Minute {
		t.Errorf("packet time %v", at)
	}
}

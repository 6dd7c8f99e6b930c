package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestStrftime formats nsecs in BPF-recorded boot time and checks that
// it names the wall clock time of the run, in the local time zone.
func TestStrftime(t *testing.T) {
	testutils.RequireRoot(t)
	before := time.Now().Truncate(time.Second)
	r := harness.Gtrace(t, "-e", `BEGIN { printf("%s|%s\n", strftime("%Y-%m-%d %H:%M:%S", nsecs), strftime("%f", nsecs)); exit(); }`)
	after := time.Now()
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	out := strings.TrimSpace(harness.StripAttaching(r.Stdout))
	stamp, micros, _ := strings.Cut(out, "|")
	got, err := time.ParseInLocation("2006-01-02 15:04:05", stamp, time.Local)
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	// The boot clock and the wall clock are read apart: allow a second.
	if got.Before(before.Add(-time.Second)) || got.After(after.Add(time.Second)) {
		t.Errorf("strftime gave %v, want a time between %v and %v", got, before, after)
	}
	if !regexp.MustCompile(`^\d{6}$`).MatchString(micros) {
		t.Errorf("%%f gave %q, want six digits", micros)
	}
}

// TestClocks reads nsecs from each clock: boot time runs ahead of the
// monotonic clock by the time spent suspended, TAI counts from 1970, and
// sw_tai stays within a millisecond of TAI.
func TestClocks(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `BEGIN { $m = nsecs(monotonic); $b = nsecs(boot); $n = nsecs; $t = nsecs(tai);
		$d = (int64)nsecs(sw_tai) - (int64)nsecs(tai);
		printf("%d %d %d %d\n", $b >= $m, $n >= $b, $t > 1500000000000000000, $d > -1000000 && $d < 1000000); exit(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got := harness.MapOutput(r.Stdout); got != "1 1 1 1\n" {
		t.Errorf("got %q, want %q", got, "1 1 1 1\n")
	}
}

// TestArrayArgument prints a tracepoint's byte arrays, the addresses of
// a refused connection on loopback, as bpftrace v0.26 prints arrays.
func TestArrayArgument(t *testing.T) {
	testutils.RequireRoot(t)
	connect := "/bin/bash " + harness.WriteScript(t, "connect.sh", "echo > /dev/tcp/127.0.0.1/1\n")
	r := harness.Gtrace(t, "-c", connect, "-e", `tracepoint:sock:inet_sock_set_state /pid == cpid && args.newstate == 2/ {
		print(args.saddr); print(args.daddr_v6); @[args.daddr] = count(); @b = buf(args.daddr); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "[127,0,0,1]\n[0,0,0,0,0,0,0,0,0,0,255,255,127,0,0,1]\n\n\n" +
		"@[[127,0,0,1]]: 1\n@b: \\x7f\\x00\\x00\\x01\n"
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestStrcontains searches literal strings, and a 1024-byte str() of a
// file name that the workload opens.
func TestStrcontains(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `BEGIN { printf("%d %d %d %d %d\n", strcontains("hello world", "o w"), strcontains("hello", "hex"),
		strcontains("abc", ""), strcontains("", "a"), strcontains("aab", "ab")); exit(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got, want := harness.MapOutput(r.Stdout), "1 0 1 0 1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r = harness.Gtrace(t, "-c", "/bin/cat /etc/hostname /etc/passwd", "-e", `tracepoint:syscalls:sys_enter_openat /pid == cpid/ {
		@[str(args.filename), strcontains(str(args.filename), "hostn")] = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{"@[/etc/hostname, true]: 1\n", "@[/etc/passwd, false]: 1\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("missing %q in:\n%s", want, r.Stdout)
		}
	}
}

// TestKernelTypeSizes reads sizes and offsets of kernel structs whose
// layout C fixes: two pointers in a list_head and a callback_head.
func TestKernelTypeSizes(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `BEGIN { printf("%d %d %d %d\n", sizeof(struct list_head), offsetof(struct list_head, prev),
		offsetof(struct callback_head, func), sizeof(uint16[5])); exit(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got, want := harness.MapOutput(r.Stdout), "16 8 8 10\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

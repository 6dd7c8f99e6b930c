package e2e

import (
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestDifferential runs each script under bpftrace and gtrace on the same
// deterministic workload and compares the printed output line by line.
// Scripts use args->field, which both accept; bpftrace 0.17 rejects args.field.
func TestDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	const (
		reads  = "tracepoint:syscalls:sys_enter_read /pid == cpid && args->fd == 0/"
		writes = "tracepoint:syscalls:sys_enter_write /pid == cpid && args->fd == 1/"
	)
	// A shell write of known bytes, and a connection refused on loopback.
	writeBytes := "/bin/sh " + harness.WriteScript(t, "write.sh", `printf 'ab\001c\n' > /dev/null`+"\n")
	connect := "/bin/bash " + harness.WriteScript(t, "connect.sh", "echo > /dev/tcp/127.0.0.1/1\n")
	tests := []struct {
		name, cmd, script string
		statsMaps         []string
	}{
		{"count", harness.DDOneByte, reads + " { @ = count(); }", nil},
		{"sum", ddMixed, writes + " { @ = sum(args->count); }", nil},
		{"avg", ddMixed, writes + " { @a = avg(args->count); }", []string{"@a"}},
		{"min max", ddMixed, writes + " { @mn = min(args->count); @mx = max(args->count); }", nil},
		{"stats", ddMixed, writes + " { @s = stats(args->count); }", []string{"@s"}},
		{"hist", ddMixed, writes + " { @h = hist(args->count); }", nil},
		{"hist all reads", harness.DD("bs=100 count=5"),
			"tracepoint:syscalls:sys_enter_read /pid == cpid/ { @h = hist(args->count); }", nil},
		{"lhist", ddMixed, writes + " { @l = lhist(args->count, 0, 10, 2); }", nil},
		{"lhist step 1", ddMixed, writes + " { @l = lhist(args->count, 0, 12, 1); }", nil},
		{"string key", harness.DDOneByte, reads + " { @[comm] = count(); }", nil},
		{"int key", ddMixed, writes + " { @[args->count] = count(); }", nil},
		{"multi key", ddMixed, writes + " { @[comm, args->count] = sum(args->count); }", nil},
		{"keyed avg", ddMixed, writes + " { @[comm] = avg(args->count); }", []string{"@"}},
		{"keyed stats", ddMixed, writes + " { @[comm, args->fd] = stats(args->count); }", []string{"@"}},
		{"keyed hist", ddMixed, writes + " { @h[comm] = hist(args->count); }", nil},
		{"printf", ddMixed, writes + ` { printf("%s wrote %d to %d\n", comm, args->count, args->fd); }`, nil},
		{"several maps", ddMixed,
			reads + " { @r = count(); @rs = sum(args->count); } " +
				writes + " { @w = count(); @wa = avg(args->count); @wh = hist(args->count); }",
			[]string{"@wa"}},
		{"buf", writeBytes, `tracepoint:syscalls:sys_enter_write /pid == cpid/ {
			printf("%r|%rx|%r|\n", buf(args->buf, args->count), buf(args->buf, 2), buf(args->buf, 0)); }`, nil},
		{"ntop arrays", connect, `tracepoint:sock:inet_sock_set_state /pid == cpid && args->newstate == 2/ {
			printf("%s %s %s %s %d\n", ntop(args->saddr), ntop(args->daddr), ntop(args->saddr_v6), ntop(args->daddr_v6), args->dport); }`, nil},
		{"ntop int", ddMixed, writes + ` { printf("%s\n", ntop(args->count)); @[ntop(2, args->count + 0x0100007f)] = count(); }`, nil},
		{"join", "/bin/true a bb ccc", `tracepoint:syscalls:sys_enter_execve /pid == cpid/ { join(args->argv); join(args->argv, "-"); }`, nil},
		{"array argument", harness.DD("bs=1 count=3"),
			`tracepoint:raw_syscalls:sys_enter /pid == cpid && args->id == 0/ { @[args->args[0], args->args[2]] = count(); }`, nil},
		{"uprobe libc read", harness.DD("bs=1 count=7"), `uprobe:libc:read /pid == cpid/ { @reads = count(); @fd[arg0] = count(); }
			uretprobe:libc:read /pid == cpid/ { @ret[retval] = count(); }`, nil},
		{"sizeof", harness.DDOneByte, `BEGIN { printf("%d %d %d %d\n", sizeof(struct task_struct), sizeof(struct list_head), sizeof(uint32), sizeof(int8)); exit(); }`, nil},
		{"begin end", harness.DDOneByte,
			`BEGIN { printf("start\n"); } ` + reads + ` { @n = count(); } END { printf("end %d\n", 1); }`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := harness.Run(t, bpftrace, "-c", tc.cmd, "-e", tc.script)
			if want.Code != 0 {
				t.Fatalf("bpftrace exit code %d, stderr:\n%s", want.Code, want.Stderr)
			}
			got := harness.Gtrace(t, "-c", tc.cmd, "-e", tc.script)
			if got.Code != 0 {
				t.Fatalf("gtrace exit code %d, stderr:\n%s", got.Code, got.Stderr)
			}
			if strings.TrimSpace(harness.Normalise(want.Stdout, tc.statsMaps)) == "" {
				t.Fatalf("bpftrace printed nothing: the workload did not fire the probe\nstderr:\n%s", want.Stderr)
			}
			wantLines := strings.Split(harness.Normalise(want.Stdout, tc.statsMaps), "\n")
			gotLines := strings.Split(harness.Normalise(got.Stdout, tc.statsMaps), "\n")
			if n, w, g := harness.FirstDifference(wantLines, gotLines); n != 0 {
				t.Errorf("script: %s\nline %d: bpftrace %q, gtrace %q\nbpftrace:\n%s\ngtrace:\n%s",
					tc.script, n, w, g, want.Stdout, got.Stdout)
			}
		})
	}
}

// TestNormalise pins the normaliser to the documented differences only.
func TestNormalise(t *testing.T) {
	in := "Attaching 2 probes...\n\n\n@a: 7\n\n@h: \n[1]  1 |@|\n\n@l: \n[1, 2)                 1 |@|\n[2, 4)                 0 | |\n" +
		"@s: count 3, average 7, total 21\n\n@x: 1\n\n"
	want := "\n\n@a: 7\n@h:\n[1]  1 |@|\n\n@l:\n[1]                    1 |@|\n[2, 4)                 0 | |\n" +
		"@s: { .count = 3, .average = 7, .total = 21 }\n@x: 1\n\n"
	if got := harness.Normalise(in, []string{"@a", "@s"}); got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

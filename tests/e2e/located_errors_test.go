package e2e

import (
	"regexp"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/kernel"
	"gtrace/tests/internal/harness"
)

// TestUndefinedMaps checks that a map nothing assigns is an error at its
// use, whatever names it, and never a crash of code generation.
func TestUndefinedMaps(t *testing.T) {
	tests := []struct{ script, want string }{
		{"BEGIN { @x = @x; }",
			"stdin:1:14-16: ERROR: Undefined map: @x\n" +
				"BEGIN { @x = @x; }\n" +
				"             ~~\n"},
		{"BEGIN { has_key(@m, 1); }",
			"stdin:1:17-19: ERROR: Undefined map: @m\n" +
				"BEGIN { has_key(@m, 1); }\n" +
				"                ~~\n"},
		{"BEGIN { delete(@m, 1); }",
			"stdin:1:16-18: ERROR: Undefined map: @m\n" +
				"BEGIN { delete(@m, 1); }\n" +
				"               ~~\n"},
		{"BEGIN { delete(@m[1]); }",
			"stdin:1:16-21: ERROR: Undefined map: @m\n" +
				"BEGIN { delete(@m[1]); }\n" +
				"               ~~~~~\n"},
		{"BEGIN { print(@m); }", "ERROR: Undefined map: @m"},
		{"BEGIN { clear(@m); }", "ERROR: Undefined map: @m"},
		{"BEGIN { zero(@m); }", "ERROR: Undefined map: @m"},
		{"BEGIN { for ($kv : @m) { print($kv); } }", "ERROR: Undefined map: @m"},
		{"BEGIN { $a = @m[1]; }", "ERROR: Undefined map: @m"},
		{"BEGIN { if (has_key(@m, 1)) { @x = @x + 1; } }", "ERROR: Undefined map: @m"},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			r := harness.Gtrace(t, "--dry-run", "-e", tc.script)
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1", r.Code)
			}
			if !errorHeader.MatchString(r.Stderr) || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("stderr:\n%s\nwant a located error with:\n%s", r.Stderr, tc.want)
			}
		})
	}
}

// TestUnreachableCode checks the warning on code after return, break,
// continue or exit(), which returns as in bpftrace, and that programs
// with such code load and run.
func TestUnreachableCode(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ script, warning, stdout string }{
		{"BEGIN { @x = 1; exit(); @y = 2; }",
			"stdin:1:25-31: WARNING: Unreachable statement.\n" +
				"BEGIN { @x = 1; exit(); @y = 2; }\n" +
				"                        ~~~~~~\n",
			"@x: 1\n"},
		{`BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 2) { break; } else { continue; } @n = 1; } printf("%d\n", $i); exit(); }`,
			"WARNING: Unreachable statement.", "2\n"},
		{`BEGIN { if (pid) { printf("then\n"); exit(); } else { return; } @x = 1; }`,
			"WARNING: Unreachable statement.", "then\n"},
		{`BEGIN { for ($i : 0..3) { break; } @m[1] = 1; @m[2] = 2; for ($kv : @m) { @n++; exit(); } printf("not here\n"); }`,
			"", "@m[1]: 1\n@m[2]: 2\n@n: 1\n"},
		{`BEGIN { unroll(3) { @u++; exit(); } @v = 1; }`,
			"WARNING: Unreachable statement.", "@u: 1\n"},
		{`BEGIN { @x = 1; if (@x) { exit(); } @x = 2; }`, "", "@x: 1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.script, func(t *testing.T) {
			r := harness.Gtrace(t, "-e", tc.script)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if stderr := harness.StripAttached(r.Stderr); tc.warning == "" && stderr != "" || !strings.Contains(stderr, tc.warning) {
				t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, tc.warning)
			}
			if got := harness.MapOutput(r.Stdout); got != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, tc.stdout)
			}
		})
	}
}

// TestVerifierErrorLocated has the verifier refuse a loop that never
// ends: the error names the script's line, the log comes only with -v,
// and it quotes the script through the programs' line info.
func TestVerifierErrorLocated(t *testing.T) {
	testutils.RequireRoot(t)
	script := "BEGIN {\n  @x = 1;\n  while (1) { continue; }\n}"
	header := regexp.MustCompile(`^stdin:3:3-26: ERROR: the BPF verifier rejected the program of begin: infinite loop detected at insn \d+ \(run with -v for the verifier's log\)\n` +
		regexp.QuoteMeta("  while (1) { continue; }\n  ~~~~~~~~~~~~~~~~~~~~~~~\n") + "$")
	r := harness.Gtrace(t, "--dry-run", "-e", script)
	if r.Code != 1 || !header.MatchString(r.Stderr) {
		t.Errorf("exit code %d, stderr:\n%s\nwant it to match:\n%s", r.Code, r.Stderr, header)
	}

	r = harness.Gtrace(t, "--dry-run", "-v", "-e", script)
	if r.Code != 1 {
		t.Errorf("-v: exit code %d, want 1", r.Code)
	}
	for _, want := range []string{"verifier log of begin:\n", "; while (1) { continue; }", "stdin:3:3-26: ERROR: the BPF verifier rejected the program of begin: infinite loop detected at insn "} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("-v: stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "run with -v") {
		t.Errorf("-v: stderr still asks for -v:\n%s", r.Stderr)
	}
}

// TestLocatedErrors checks errors found after the checker, by code
// generation or by the checks of attach points against the kernel:
// each at its place in the script.
func TestLocatedErrors(t *testing.T) {
	testutils.RequireRoot(t)
	deep := "1"
	for range 70 {
		deep = "1 + (" + deep + ")"
	}
	tests := []struct{ name, script, want string }{
		{"out of stack", "BEGIN {\n  @x = " + deep + ";\n}", "stdin:2:3-"},
		{"raw tracepoint", "rawtracepoint:vmlinux:no_such_tp { }",
			"stdin:1:1-33: ERROR: No matches for rawtracepoint vmlinux:no_such_tp.\n" +
				"rawtracepoint:vmlinux:no_such_tp { }\n" +
				"~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"},
		{"raw tracepoint in no module", "rawtracepoint:no_such_tp { }",
			"stdin:1:1-25: ERROR: Probe has no valid attach points. If this is expected, set the 'missing_probes' config variable to 'warn'.\n" +
				"rawtracepoint:no_such_tp { }\n" +
				"~~~~~~~~~~~~~~~~~~~~~~~~\n"},
		{"interval overflow", "interval:s:18446744073709551615 { }",
			"stdin:1:1-32: ERROR: interval probe: a period of 18446744073709551615 s is too long: the kernel takes at most 9223372036 s\n" +
				"interval:s:18446744073709551615 { }\n" +
				"~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, "--dry-run", "-e", tc.script)
			if r.Code != 1 {
				t.Errorf("exit code %d, want 1", r.Code)
			}
			if !errorHeader.MatchString(r.Stderr) || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("stderr:\n%s\nwant a located error with:\n%s", r.Stderr, tc.want)
			}
		})
	}
	r := harness.Gtrace(t, "--dry-run", "-e", "BEGIN {\n  @x = "+deep+";\n}")
	if !strings.Contains(r.Stderr, "ERROR: expression too deep: out of BPF stack\n  @x = 1 + (1") {
		t.Errorf("out of stack: stderr:\n%s", r.Stderr)
	}
}

// TestKprobeNotTraceable checks the warnings of --dry-run for a kprobe on
// no function, on a host with or without kprobes.
func TestKprobeNotTraceable(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "--dry-run", "-e", "kprobe:no_such_fn { }")
	if r.Code != 0 {
		t.Errorf("exit code %d, want 0 as bpftrace's: the program loads", r.Code)
	}
	want := "stdin:1:1-18: WARNING: no_such_fn is not traceable (either non-existing, inlined, or marked as \"notrace\"); attaching to it will likely fail\n" +
		"kprobe:no_such_fn { }\n" +
		"~~~~~~~~~~~~~~~~~\n"
	if !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, want)
	}
	noKprobes := "stdin:1:1-18: WARNING: this kernel has no kprobes"
	if !kernel.HasKprobes() && !strings.Contains(r.Stderr, noKprobes) {
		t.Errorf("stderr does not say this kernel has no kprobes:\n%s", r.Stderr)
	}
}

// TestShiftsAndBswap checks shifts by 64 bits or more, which BPF would
// take modulo 64, and bswap of a byte, which BPF has no instruction for.
func TestShiftsAndBswap(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", `BEGIN { $s = 64; $t = 65; $n = -1; $v = 1; $v <<= 64;
		printf("%lu %lu %lu %lu %lu %lu\n", 1 << 64, 1 << 63, 1 >> 64, 1 << $s, 1 << $t, 1 << $n);
		printf("%ld %ld %ld %ld\n", -8 >> 64, -8 >> $n, 8 >> $n, $v);
		printf("%d %d %d %d\n", bswap((uint8)200), bswap((int8)-2), bswap((uint16)0x1234), bswap((uint32)1));
		exit(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "0 9223372036854775808 0 0 0 0\n" +
		"-1 -1 0 0\n" +
		"200 254 13330 16777216\n"
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
}

// TestTracingRefusalHint checks that a refused fentry program is
// explained without cilium/ebpf's hint about RLIMIT_MEMLOCK.
func TestTracingRefusalHint(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "--dry-run", "-e", "fentry:vfs_read { @ = count(); }")
	if r.Code == 0 {
		testutils.Skip(t, "this kernel loads fentry programs")
	}
	if strings.Contains(r.Stderr, "MEMLOCK") {
		t.Errorf("stderr blames RLIMIT_MEMLOCK:\n%s", r.Stderr)
	}
	if !errorHeader.MatchString(r.Stderr) || !strings.Contains(r.Stderr, "fentry:vfs_read { @ = count(); }\n~~~~~~~~~~~~~~~\n") {
		t.Errorf("stderr does not locate the refusal at the probe:\n%s", r.Stderr)
	}
}

// TestAttachErrorLocated checks that a probe that fails to attach is
// reported at its attach point: this machine has no hardware counters.
func TestAttachErrorLocated(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-e", "BEGIN { }\nhardware:cycles:1000 { @ = count(); }")
	if r.Code == 0 {
		testutils.Skip(t, "this machine has hardware counters")
	}
	want := regexp.MustCompile(`^stdin:2:1-21: ERROR: Unable to attach probe: hardware:cycles:1000\. If this is expected, set the 'missing_probes' config variable to 'warn'\.\n` +
		regexp.QuoteMeta("hardware:cycles:1000 { @ = count(); }\n~~~~~~~~~~~~~~~~~~~~\n") + "ERROR: .*\n$")
	if !want.MatchString(r.Stderr) {
		t.Errorf("stderr:\n%s\nwant it to match:\n%s", r.Stderr, want)
	}
}

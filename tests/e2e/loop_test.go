package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestForLoops runs for loops over maps and ranges, and len(), in BEGIN
// and END, where the values are fixed by the script itself.
func TestForLoops(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []scriptCase{
		{"map sum", `BEGIN { @a[1] = 10; @a[2] = 20; @a[3] = 30; $s = 0;
			for ($kv : @a) { $s += $kv.0 * $kv.1; } printf("%d\n", $s); clear(@a); exit(); }`, "140\n"},
		{"tuple keys", `BEGIN { @t["x", 2] = 5; for ($kv : @t) { printf("%s %d %d\n", $kv.0.0, $kv.0.1, $kv.1); } clear(@t); exit(); }`,
			"x 2 5\n"},
		{"string values", `BEGIN { @s[7] = "seven"; for ($kv : @s) { printf("%d=%s\n", $kv.0, $kv.1); } clear(@s); exit(); }`,
			"7=seven\n"},
		{"aggregations", `BEGIN { @c["k"] = count(); @c["k"] = count(); @s["k"] = sum(-4); @s["k"] = sum(10);
			@lo["k"] = min(8); @lo["k"] = min(-2); @hi["k"] = max(3); @hi["k"] = max(11);
			for ($kv : @c) { printf("count %d\n", $kv.1); } for ($kv : @s) { printf("sum %d\n", $kv.1); }
			for ($kv : @lo) { printf("min %d\n", $kv.1); } for ($kv : @hi) { printf("max %d\n", $kv.1); }
			clear(@c); clear(@s); clear(@lo); clear(@hi); exit(); }`, "count 2\nsum 6\nmin -2\nmax 11\n"},
		{"range", `BEGIN { for ($i : 3..6) { printf("%d ", $i); } printf("\n"); exit(); }`, "3 4 5 \n"},
		{"empty range", `BEGIN { for ($i : 5..2) { printf("never\n"); } printf("done\n"); exit(); }`, "done\n"},
		{"range bounds once", `BEGIN { $a = 4; for ($i : 0..$a) { $a--; } printf("%d\n", $a); exit(); }`, "0\n"},
		{"break continue", `BEGIN { $n = 0; for ($i : 0..100) { if ($i % 2 == 0) { continue; } if ($i > 9) { break; } $n += $i; } printf("%d\n", $n); exit(); }`,
			"25\n"},
		{"nested", `BEGIN { $n = 0; for ($i : 0..3) { for ($j : 0..$i) { $n++; } } printf("%d\n", $n); exit(); }`, "3\n"},
		{"nested map and range", `BEGIN { @a[1] = 2; @a[2] = 3; $n = 0; for ($kv : @a) { for ($j : 0..$kv.1) { $n += $kv.0; } } printf("%d\n", $n); clear(@a); exit(); }`,
			"8\n"},
		{"return ends the probe", `BEGIN { for ($i : 0..10) { if ($i == 2) { printf("ret\n"); return; } } printf("after\n"); } BEGIN { exit(); }`,
			"ret\n"},
		{"return from nested loop", `BEGIN { for ($i : 0..3) { for ($j : 0..3) { if ($j == 1) { return; } printf("%d%d\n", $i, $j); } } printf("after\n"); } BEGIN { exit(); }`,
			"00\n"},
		{"map writes in body", `BEGIN { @a[1] = 1; @a[2] = 2; for ($kv : @a) { @b[$kv.0 + 10] = $kv.1 * 2; } clear(@a); exit(); }`,
			"@b[11]: 2\n@b[12]: 4\n"},
		{"len", `BEGIN { @a[1] = 1; @a[2] = 2; @a[3] = 3; delete(@a[2]); @c["x"] = count(); printf("%d %d\n", len(@a), len(@c)); clear(@a); clear(@c); exit(); }`,
			"2 1\n"},
		{"len of empty map", `BEGIN { @a[1] = 1; delete(@a[1]); printf("%d\n", len(@a)); exit(); }`, "0\n"},
		{"map assigned after the loop", `BEGIN { @a[1] = 5; } END { for ($kv : @b) { printf("%d %d\n", $kv.0, $kv.1); } @b[1] = @a[1]; clear(@a); clear(@b); }
			interval:ms:10 { for ($kv : @c) { printf("%d\n", $kv.1); } if (@c[7]) { exit(); } @c[7] = 9; } END { clear(@c); }`, "9\n"},
		{"end loop", `BEGIN { @a["x"] = 3; exit(); } END { for ($kv : @a) { printf("%s:%d\n", $kv.0, $kv.1); } clear(@a); }`,
			"x:3\n"},
	}
	runScripts(t, tests)
}

// TestForLoopPerCPU counts reads of two dd processes pinned to different
// CPUs, then reads the count in a for loop: the loop must merge both
// CPUs' values as the map printer does. It also reads the tracepoint's
// arguments inside a loop body, which runs as a callback.
func TestForLoopPerCPU(t *testing.T) {
	testutils.RequireRoot(t)
	if runtime.NumCPU() < 2 {
		testutils.Skip(t, "needs two CPUs to spread the workload") // not this machine, nor CI's
	}
	// A copy of dd under its own name, so that comm picks out the
	// workload and nothing else on the machine.
	bin := filepath.Join(t.TempDir(), "gtloopdd")
	data, err := os.ReadFile("/usr/bin/dd")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Fatalf("taskset: %v", err)
	}
	run := func(cpu int) string {
		return fmt.Sprintf("%s -c %d %s if=/dev/zero of=/dev/null status=none bs=1 count=37\n", taskset, cpu, bin)
	}
	work := harness.WriteScript(t, "work.sh", run(0)+run(1))
	script := `tracepoint:syscalls:sys_enter_read /comm == "gtloopdd" && args.fd == 0/ {
		@reads[comm] = count();
		for ($i : 0..2) { @args[$i] = sum(args.count); }
	}
	END { for ($kv : @reads) { printf("%s %d\n", $kv.0, $kv.1); } for ($kv : @args) { printf("%d %d\n", $kv.0, $kv.1); } clear(@reads); clear(@args); }`
	r := harness.Gtrace(t, "-c", work, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	got := harness.MapOutput(r.Stdout)
	want1 := "gtloopdd 74\n0 74\n1 74\n"
	want2 := "gtloopdd 74\n1 74\n0 74\n"
	if got != want1 && got != want2 {
		t.Errorf("got:\n%s\nwant:\n%s", got, want1)
	}
}

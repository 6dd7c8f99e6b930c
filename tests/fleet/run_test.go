package fleet

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"gtrace/tests/internal/harness"
)

// workloadComm is the name of the dd copy whose reads the programs
// count, so that no other process's reads come in.
const workloadComm = "gtfleetdd"

// workloadProgram counts the workload's reads of its input, and
// their sizes.
const workloadProgram = `tracepoint:syscalls:sys_enter_read /comm == "` + workloadComm + `" && args.fd == 0/ {
	@reads = count(); @bytes = hist(args.count); @by_size[args.count] = count(); }`

// workload makes reads: dd reads its input on fd 0, one read of bs
// bytes per block. It returns the reads made of each size.
func workload(t *testing.T, dd string) map[int]int {
	t.Helper()
	sizes := map[int]int{100: 3, 1000: 5, 5000: 2} // bytes: reads
	for bs, n := range sizes {
		out, err := exec.Command(dd, "if=/dev/zero", "of=/dev/null", "status=none",
			"bs="+strconv.Itoa(bs), "count="+strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			t.Fatalf("dd: %v\n%s", err, out)
		}
	}
	return sizes
}

func copyDD(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/usr/bin/dd")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), workloadComm)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// histBuckets are the hist() buckets of the sizes the workload reads.
var histBuckets = map[int]string{100: "[64, 128)", 1000: "[512, 1K)", 5000: "[4K, 8K)"}

// runFleet runs kubectl gtrace run with args as the user of kubeconfig,
// drives the workload once every node has attached its probes, then
// stops the run with Ctrl-C as a user would, and returns the workload's
// reads, what kubectl printed, and its exit code.
func runFleet(t *testing.T, c *cluster, kubeconfig string, args ...string) (map[int]int, string, string, int) {
	t.Helper()
	dd := copyDD(t)
	cmd := c.kubectl(kubeconfig, append([]string{"gtrace", "run"}, args...)...)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	attached := 0
	var stderr []string
	lines := harness.StartWait(t, cmd, harness.Stderr, func(l string) bool {
		stderr = append(stderr, l)
		if strings.HasSuffix(l, "] Attached 1 probe") {
			attached++
		}
		return attached == len(c.nodes)
	}, nil)
	sizes := workload(t, dd)
	// kubectl execs the plugin: the signal reaches it.
	cmd.Process.Signal(syscall.SIGINT)
	for l := range lines {
		stderr = append(stderr, l)
	}
	err := cmd.Wait()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl gtrace run %s\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), strings.Join(stderr, "\n"), stdout.String())
	return sizes, stdout.String(), strings.Join(stderr, "\n"), code
}

var histLine = regexp.MustCompile(`^(\[[^)\]]*[)\]])\s+(\d+) \|`)

// parseMaps reads the maps the text printer printed: scalar entries by
// "@name[key]" and the buckets of a hist by "@name[key] [lo, hi)".
func parseMaps(t *testing.T, out string) map[string]uint64 {
	t.Helper()
	values := map[string]uint64{}
	current := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if m := histLine.FindStringSubmatch(l); m != nil && current != "" {
			n, _ := strconv.ParseUint(m[2], 10, 64)
			values[current+" "+m[1]] = n
			continue
		}
		if !strings.HasPrefix(l, "@") {
			continue
		}
		name, value, _ := strings.Cut(l, ": ")
		current = strings.TrimSuffix(name, ":")
		if n, err := strconv.ParseUint(value, 10, 64); err == nil {
			values[name] = n
		}
	}
	return values
}

// TestRunAllNodes runs a program on three simulated nodes through the
// API server with kubectl gtrace run --all-nodes, as a user types it.
// The nodes share this machine's kernel, so each node's agent counts
// every read of the workload: each node's exact count is the workload's,
// and the merged map must be their sum, three times the workload's,
// bucket by bucket for the histogram.
func TestRunAllNodes(t *testing.T) {
	c := startCluster(t, 3, "")
	tracer := c.user(t, "tracer", "gtrace-user")

	t.Run("merged", func(t *testing.T) {
		sizes, stdout, stderr, code := runFleet(t, c, tracer, "--all-nodes", "-e", workloadProgram)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		got := parseMaps(t, stdout)
		want := map[string]uint64{}
		total := 0
		for size, n := range sizes {
			total += n
			want["@bytes "+histBuckets[size]] += uint64(3 * n)
			want[fmt.Sprintf("@by_size[%d]", size)] = uint64(3 * n)
		}
		want["@reads"] = uint64(3 * total)
		checkMaps(t, got, want, stdout)
	})

	t.Run("per node", func(t *testing.T) {
		sizes, stdout, stderr, code := runFleet(t, c, tracer, "--all-nodes", "--per-node", "-e", workloadProgram)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		got := parseMaps(t, stdout)
		want := map[string]uint64{}
		for _, node := range c.nodes {
			total := 0
			for size, n := range sizes {
				total += n
				want["@bytes["+node.name+"] "+histBuckets[size]] += uint64(n)
				want[fmt.Sprintf("@by_size[%s, %d]", node.name, size)] = uint64(n)
			}
			want["@reads["+node.name+"]"] = uint64(total)
		}
		checkMaps(t, got, want, stdout)
	})
}

// checkMaps compares every value parsed from the output with want.
func checkMaps(t *testing.T, got, want map[string]uint64, out string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	for k, v := range got {
		// Empty buckets between the filled ones print as 0.
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("unexpected %s = %d", k, v)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

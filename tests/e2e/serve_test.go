package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gtrace/internal/testnet"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// serveComm is the name of the dd copy whose reads the serve tests
// count, so that no other process's reads come in.
const serveComm = "gtmetricsdd"

// TestServePrometheus runs gtrace serve, has Debian's Prometheus scrape
// it on loopback, and asks Prometheus through its HTTP API: the counter
// of reads must be the exact number of reads the test made, and
// histogram_quantile over the size buckets must fall in the bucket of
// the median that gtrace itself prints.
func TestServePrometheus(t *testing.T) {
	testutils.RequireRoot(t)
	prometheus, err := exec.LookPath("prometheus")
	if err != nil {
		testutils.Skip(t, "needs Debian's prometheus")
	}
	dir := t.TempDir()
	dd := copyDD(t, dir)

	script := `tracepoint:syscalls:sys_enter_read /comm == "` + serveComm + `" && args.fd == 0/ {
		@reads[comm] = count(); @read_bytes = hist(args.count); }`
	gtrace := exec.Command(harness.Bin(), "serve", "--metrics", "127.0.0.1:0", "--stats", "-e", script)
	var stdout strings.Builder
	gtrace.Stdout = &stdout
	var addr string
	serving := func(l string) bool {
		a, ok := strings.CutPrefix(l, "Serving metrics at http://")
		addr = strings.TrimSuffix(a, "/metrics")
		return ok
	}
	go harness.Drain(harness.StartWait(t, gtrace, harness.Stderr, serving, nil))
	t.Cleanup(func() {
		gtrace.Process.Signal(syscall.SIGINT)
		gtrace.Wait()
	})

	// dd reads its input on fd 0, one read of bs bytes per block.
	sizes := map[int]int{100: 3, 1000: 5, 5000: 2} // bytes: reads
	reads := 0
	for bs, n := range sizes {
		out, err := exec.Command(dd, "if=/dev/zero", "of=/dev/null", "status=none",
			"bs="+strconv.Itoa(bs), "count="+strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			t.Fatalf("dd: %v\n%s", err, out)
		}
		reads += n
	}

	api := startPrometheus(t, prometheus, dir, addr)
	got := queryUntil(t, api, `gtrace_reads_total{comm="`+serveComm+`"}`)
	if got != strconv.Itoa(reads) {
		t.Errorf("Prometheus: gtrace_reads_total = %s, want the %d reads made", got, reads)
	}
	if lost := queryUntil(t, api, "gtrace_self_lost_events_total"); lost != "0" {
		t.Errorf("Prometheus: gtrace_self_lost_events_total = %s, want 0", lost)
	}
	runs := queryUntil(t, api, `gtrace_self_probe_runs_total{probe="tracepoint:syscalls:sys_enter_read"}`)
	if n, err := strconv.ParseFloat(runs, 64); err != nil || n < float64(reads) {
		t.Errorf("Prometheus: gtrace_self_probe_runs_total = %s, want at least %d", runs, reads)
	}
	median, err := strconv.ParseFloat(queryUntil(t, api, "histogram_quantile(0.5, gtrace_read_bytes_bucket)"), 64)
	t.Logf("reads %s, runs %s, median %g", got, runs, median)
	if err != nil {
		t.Fatal(err)
	}

	checkExposition(t, "http://"+addr+"/metrics")

	gtrace.Process.Signal(syscall.SIGINT)
	gtrace.Wait()
	hist, ok := harness.ParseHist(stdout.String(), "@read_bytes:")
	if !ok || hist.Total() != reads {
		t.Fatalf("gtrace printed no @read_bytes of %d reads:\n%s", reads, stdout.String())
	}
	// The bucket where the count reaches half the reads; Prometheus
	// interpolates within (lo-1, 2lo-1], the integers lo to 2lo-1.
	lows := make([]uint64, 0, len(hist))
	for lo := range hist {
		lows = append(lows, lo)
	}
	slices.Sort(lows)
	seen := 0
	for _, lo := range lows {
		seen += hist[lo]
		if 2*seen >= reads {
			if median <= float64(lo)-1 || median > float64(2*lo-1) {
				t.Errorf("histogram_quantile(0.5) = %g, outside the median's bucket [%d, %d) that gtrace prints:\n%s",
					median, lo, 2*lo, stdout.String())
			}
			if lo != 512 {
				t.Errorf("gtrace's median bucket starts at %d, want 512, the bucket of the 1000-byte reads", lo)
			}
			break
		}
	}
}

// checkExposition fetches the classic text format from a running gtrace
// serve and has promtool parse and lint it.
func checkExposition(t *testing.T, url string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		testutils.Skip(t, "needs promtool (Debian's prometheus)")
	}
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("GET %s: content type %q", url, ct)
	}
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(string(body))
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\nof:\n%s", err, out, body)
	}
}

// copyDD copies dd into dir under the name serveComm, and returns its
// path.
func copyDD(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile("/usr/bin/dd")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, serveComm)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// startPrometheus starts Prometheus on a free loopback port, scraping
// target every second, its data in dir, and returns the base address of
// its HTTP API. It stops when the test ends.
func startPrometheus(t *testing.T, prometheus, dir, target string) string {
	t.Helper()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gtrace
    static_configs:
      - targets: ['%s']
`, target)
	return testnet.StartPrometheus(t, prometheus, dir, config)
}

// queryUntil asks Prometheus' API for an instant query until it has a
// result, a minute at most, and returns the value of its one sample.
func queryUntil(t *testing.T, api, query string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		values, answer, err := testnet.PrometheusQuery(api, query)
		if err != nil {
			last = err.Error()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		last = answer
		if len(values) > 0 {
			if len(values) != 1 {
				t.Fatalf("query %s: %d series, want 1: %s", query, len(values), answer)
			}
			return values[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("query %s: no result within a minute; last answer: %s", query, last)
	return ""
}

// TestServeErrors checks serve's command-line errors, each named before
// anything is loaded.
func TestServeErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "-e", "BEGIN { exit(); }"}, "serve needs --metrics ADDR"},
		{[]string{"serve", "--metrics", "nonsense", "-e", "BEGIN { exit(); }"}, "--metrics: listen on nonsense: address nonsense: missing port in address"},
		{[]string{"serve", "--metrics", busy.Addr().String(), "-e", "BEGIN { exit(); }"}, "address already in use"},
		{[]string{"serve", "--metrics", "127.0.0.1:0", "--metrics-max-series", "0", "-e", "BEGIN { exit(); }"}, `--metrics-max-series: "0" is not a positive number`},
		{[]string{"serve", "--metrics", "127.0.0.1:0", "-l", "tracepoint:syscalls:*"}, "-l, --mode, --dry-run and --emit-elf do not apply"},
		{[]string{"serve", "--metrics", "127.0.0.1:0", "-e", "BEGIN { @a = count(); @a_total = min(1); exit(); }"}, "map @a_total: its metric gtrace_a_total collides with map @a: rename the map"},
	}
	for _, tt := range tests {
		r := harness.Gtrace(t, tt.args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("gtrace %q: exit %d, stderr:\n%s\nwant exit 1 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
	}
	if r := harness.Gtrace(t, "serve", "-h"); r.Code != 0 || !strings.Contains(r.Stdout, "gtrace serve --metrics ADDR") {
		t.Errorf("serve -h: exit %d, stdout:\n%s", r.Code, r.Stdout)
	}
}

package fleet

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gtrace/internal/kubeprom"
	"gtrace/internal/testnet"
	"gtrace/internal/testutils"
)

// TestPrometheusDiscovery has Prometheus find the agents with
// kubernetes_sd_configs pointed at the API server, as a cluster's
// Prometheus would, and scrape the maps of their standing script: the
// sum over the nodes of the workload's reads must be exact, three times
// the reads made, as each node counts this machine's reads.
func TestPrometheusDiscovery(t *testing.T) {
	testutils.RequireRoot(t)
	prometheus := kubeprom.Binary(t)
	scripts := t.TempDir()
	standing := `tracepoint:syscalls:sys_enter_read /comm == "` + workloadComm + `" && args.fd == 0/ { @fleet_reads = count(); }` + "\n"
	if err := os.WriteFile(filepath.Join(scripts, "reads.bt"), []byte(standing), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, 3, scripts)

	// Prometheus as a service account that may watch the agents' pods.
	c.api.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+agentNamespace+"/roles", map[string]any{
		"metadata": map[string]any{"name": "prometheus"},
		"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get", "list", "watch"}}},
	})
	c.api.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+agentNamespace+"/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "prometheus"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "prometheus"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "prometheus", "namespace": agentNamespace}},
	})
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(c.api.CreateServiceAccount(t, agentNamespace, "prometheus")), 0o600); err != nil {
		t.Fatal(err)
	}
	api := testnet.StartPrometheus(t, prometheus, dir, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gtrace-agents
    # The agents serve HTTPS with certificates of their own.
    scheme: https
    tls_config:
      insecure_skip_verify: true
    kubernetes_sd_configs:
      - role: pod
        api_server: %s
        namespaces:
          names: [%s]
        authorization:
          credentials_file: %s
        tls_config:
          ca_file: %s
    relabel_configs:
      - source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name, __meta_kubernetes_pod_container_port_name]
        regex: gtrace-agent;api
        action: keep
      - source_labels: [__meta_kubernetes_pod_node_name]
        target_label: node
`, c.api.URL, agentNamespace, tokenFile, c.api.CAFile))

	// Every agent found and scraped: its standing script is attached.
	query(t, api, `count(up{job="gtrace-agents"} == 1)`, func(v string) bool { return v == strconv.Itoa(len(c.nodes)) })
	sizes := workload(t, copyDD(t))
	reads := 0
	for _, n := range sizes {
		reads += n
	}
	want := strconv.Itoa(len(c.nodes) * reads)
	got := query(t, api, `sum(gtrace_fleet_reads_total)`, func(v string) bool {
		n, _ := strconv.Atoi(v)
		return n >= len(c.nodes)*reads
	})
	if got != want {
		t.Errorf("Prometheus: sum(gtrace_fleet_reads_total) = %s, want %s: %d reads seen by each of %d nodes", got, want, reads, len(c.nodes))
	}
	for _, node := range c.nodes {
		q := `gtrace_fleet_reads_total{node="` + node.name + `"}`
		if got := query(t, api, q, func(string) bool { return true }); got != strconv.Itoa(reads) {
			t.Errorf("Prometheus: %s = %s, want %d", q, got, reads)
		}
	}
}

// query asks Prometheus' API for an instant query until the value of
// its one sample satisfies done, two minutes at most, and returns it.
func query(t *testing.T, api, q string, done func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		values, answer, err := testnet.PrometheusQuery(api, q)
		if err != nil {
			last = err.Error()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		last = answer
		if len(values) == 1 && done(values[0]) {
			return values[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	targets := ""
	if resp, err := http.Get(api + "/api/v1/targets"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		targets = string(body)
	}
	t.Fatalf("query %s: no answer as awaited within two minutes; last answer: %s\ntargets: %s", q, last, targets)
	return ""
}

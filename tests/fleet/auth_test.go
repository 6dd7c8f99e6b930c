package fleet

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"gtrace/agent"
	"gtrace/kube"
)

// TestAuthorization checks who may run what on the agents, by the RBAC
// of deploy/ in a real API server: the plugin's users, and a caller
// that goes straight to an agent's pod address. The same cluster also
// checks the targets, a deadline, and maps that have no exact merge.
func TestAuthorization(t *testing.T) {
	c := startCluster(t, 3, "")
	tracer := c.user(t, "tracer", "gtrace-user")
	unsafe := c.user(t, "unsafe", "gtrace-unsafe-user")
	nobody := c.user(t, "nobody", "")
	user := func(name string) string { return "system:serviceaccount:users:" + name }

	tests := []struct {
		name       string
		kubeconfig string
		args       []string
		fails      bool
		want       []string // lines of the output
	}{
		{"allowed", tracer, []string{"node/node-2", "-e", `BEGIN { printf("hello\n"); exit(); }`}, false,
			[]string{"[node-2] hello"}},
		{"by node labels", tracer, []string{"-l", "fleet.gtrace.test/index in (1,3)", "-e", `BEGIN { printf("hello\n"); exit(); }`}, false,
			[]string{"[node-1] hello", "[node-3] hello"}},
		{"service account without the right", nobody, []string{"--all-nodes", "-e", `BEGIN { exit(); }`}, true,
			[]string{
				`[node-1] ERROR: gtrace agent: user "` + user("nobody") + `" may not trace on node "node-1": that needs the verb "trace" on the resource "nodes" of the API group "gtrace.io" (403 Forbidden)`,
				`[node-2] ERROR: gtrace agent: user "` + user("nobody") + `" may not trace on node "node-2": that needs the verb "trace" on the resource "nodes" of the API group "gtrace.io" (403 Forbidden)`,
				`[node-3] ERROR: gtrace agent: user "` + user("nobody") + `" may not trace on node "node-3": that needs the verb "trace" on the resource "nodes" of the API group "gtrace.io" (403 Forbidden)`,
			}},
		{"unsafe without its right", tracer, []string{"node/node-1", "--unsafe", "-e", `BEGIN { system("echo unsafe ran"); exit(); }`}, true,
			[]string{`[node-1] ERROR: gtrace agent: user "` + user("tracer") + `" may not trace-unsafe on node "node-1": that needs the verb "trace-unsafe" on the resource "nodes" of the API group "gtrace.io" (403 Forbidden)`}},
		{"unsafe builtin without --unsafe", unsafe, []string{"node/node-1", "-e", `BEGIN { system("echo unsafe ran"); exit(); }`}, true,
			[]string{`[node-1] stdin:1:9-34: ERROR: system() is an unsafe function being used in safe mode`}},
		{"unsafe with its right", unsafe, []string{"node/node-1", "--unsafe", "-e", `BEGIN { system("echo unsafe ran"); exit(); }`}, false,
			[]string{"[node-1] unsafe ran"}},
		{"deadline", tracer, []string{"node/node-3", "--deadline", "1s", "-e", `tracepoint:syscalls:sys_enter_getppid { @n = count(); } END { printf("ended\n"); }`}, false,
			[]string{"[node-3] ended"}},
		{"a map without exact merge, per node", tracer, []string{"--all-nodes", "-e", `BEGIN { @x = 7; @n = count(); exit(); }`}, false,
			[]string{"@n: 3", "@x[node-1]: 7", "@x[node-2]: 7", "@x[node-3]: 7"}},
		{"missing node", tracer, []string{"node/node-9", "-e", `BEGIN { exit(); }`}, true,
			[]string{"ERROR: no ready gtrace agent in namespace gtrace on node node-9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.api.RunKubectl(tt.kubeconfig, append([]string{"gtrace", "run"}, tt.args...)...)
			if (err != nil) != tt.fails {
				t.Errorf("error %v, want failure %v; output:\n%s", err, tt.fails, out)
			}
			lines := strings.Split(out, "\n")
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					found = found || l == w
				}
				if !found {
					t.Errorf("no line %q in the output:\n%s", w, out)
				}
			}
		})
	}

	// Straight to the pod's address, past the API server: /readyz
	// answers anyone, as the kubelet has no token to give, and the API
	// nobody without a token.
	node := c.nodes[0]
	base := fmt.Sprintf("https://%s:%d", node.podIP, agentPort)
	// The agent's certificate is its own, which nobody checks.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	directTests := []struct {
		method, path, header string
		code                 int
		body                 string
	}{
		{http.MethodGet, "/readyz", "", 200, "ok"},
		{http.MethodPost, "/v1/run", "", 401, "gtrace agent: no bearer token"},
		{http.MethodPost, "/v1/run", "Bearer not-a-token", 401, "gtrace agent: invalid token"},
		{http.MethodPost, "/v1/stop", "", 401, "gtrace agent: no bearer token"},
	}
	for _, tt := range directTests {
		t.Run("direct "+tt.method+" "+tt.path+" "+tt.header, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, base+tt.path, strings.NewReader(`{"program": "BEGIN { exit(); }"}`))
			if err != nil {
				t.Fatal(err)
			}
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.body) {
				t.Errorf("got %s: %s, want %d with %q", resp.Status, body, tt.code, tt.body)
			}
		})
	}
}

// TestStopBeforeRun sends a run's stop before the run itself, through
// the pod proxy, as kubectl gtrace may when Ctrl-C comes while its run
// request is on its way: the run ends as it starts, with its maps, and
// another user's stop is no stop.
func TestStopBeforeRun(t *testing.T) {
	c := startCluster(t, 1, "")
	client := func(kubeconfig string) *kube.Client {
		cfg, err := kube.LoadKubeconfig([]string{kubeconfig}, "")
		if err != nil {
			t.Fatal(err)
		}
		client, err := kube.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return client
	}
	tracer := client(c.user(t, "tracer", "gtrace-user"))
	other := client(c.user(t, "other", "gtrace-user"))
	pod := kube.PodPort{Namespace: agentNamespace, Name: "gtrace-agent-node-1", Port: agentPort, HTTPS: true}
	post := func(client *kube.Client, path string, body any) *http.Response {
		t.Helper()
		token, err := client.BearerToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(body)
		header := http.Header{agent.TokenHeader: {"Bearer " + token}}
		resp, err := client.Proxy(context.Background(), pod, http.MethodPost, path, nil, header, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v", path, kube.ResponseError(resp))
		}
		return resp
	}
	run := func(client *kube.Client, id string, deadline float64) string {
		t.Helper()
		resp := post(client, "/v1/run", agent.RunRequest{ID: id, Deadline: deadline,
			Program: `tracepoint:syscalls:sys_enter_getppid { @n = count(); } END { printf("ended\n"); }`})
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	post(other, "/v1/stop", agent.StopRequest{ID: "early"}).Body.Close()
	// Another user's stop does not end the run: its deadline does.
	if out := run(tracer, "early", 1); !strings.Contains(out, `"text":"ended"`) || !strings.Contains(out, `"exit":0`) {
		t.Errorf("the run after another user's stop:\n%s", out)
	}
	post(tracer, "/v1/stop", agent.StopRequest{ID: "early-2"}).Body.Close()
	// The deadline of an hour would keep the test waiting: the stop
	// ends the run.
	if out := run(tracer, "early-2", 3600); !strings.Contains(out, `"text":"ended"`) || !strings.Contains(out, `{"type":"end","exit":0}`) {
		t.Errorf("the run after its stop:\n%s", out)
	}
}

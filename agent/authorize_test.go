package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gtrace/internal/kubeapi"
	"gtrace/kube"
)

const testNamespace = "gtrace-agent-test"

// rbac creates a ClusterRole with rules and binds it to the service
// accounts of testNamespace that subjects name.
func rbac(t *testing.T, s *kubeapi.Server, role string, rules []any, subjects ...string) {
	t.Helper()
	s.Create(t, "/apis/rbac.authorization.k8s.io/v1/clusterroles", map[string]any{
		"metadata": map[string]any{"name": role},
		"rules":    rules,
	})
	var bound []any
	for _, name := range subjects {
		bound = append(bound, map[string]any{"kind": "ServiceAccount", "name": name, "namespace": testNamespace})
	}
	s.Create(t, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
		"metadata": map[string]any{"name": role},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
		"subjects": bound,
	})
}

func rule(group, resource string, names []string, verbs ...string) map[string]any {
	r := map[string]any{"apiGroups": []string{group}, "resources": []string{resource}, "verbs": verbs}
	if names != nil {
		r["resourceNames"] = names
	}
	return r
}

// testUsers are the service accounts that TestAuthorizer creates, and
// what each may do.
var testUsers = []string{"agent", "nobody", "tracer", "unsafe", "elsewhere", "blind-agent"}

// setUp starts an API server with the service accounts of testUsers
// and their rights, and returns it with a token for each user.
func setUp(t *testing.T) (*kubeapi.Server, map[string]string) {
	s := kubeapi.Start(t)
	s.CreateNamespace(t, testNamespace)
	tokens := map[string]string{}
	for _, name := range testUsers {
		tokens[name] = s.CreateServiceAccount(t, testNamespace, name)
	}
	rbac(t, s, "test-gtrace-reviewer", []any{
		rule("authentication.k8s.io", "tokenreviews", nil, "create"),
		rule("authorization.k8s.io", "subjectaccessreviews", nil, "create"),
	}, "agent")
	rbac(t, s, "test-gtrace-trace", []any{rule(Group, Resource, []string{"node-1"}, VerbTrace)}, "tracer")
	rbac(t, s, "test-gtrace-trace-unsafe", []any{rule(Group, Resource, nil, VerbTrace, VerbTraceUnsafe)}, "unsafe")
	rbac(t, s, "test-gtrace-trace-node-2", []any{rule(Group, Resource, []string{"node-2"}, VerbTrace)}, "elsewhere")
	return s, tokens
}

// runHandler stands for the agent's run API: it runs nothing, but asks
// for the unsafe right when the query has unsafe, and names the user.
func runHandler(auth *Authorizer) http.Handler {
	return auth.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("unsafe") && !auth.AllowUnsafe(w, r) {
			return
		}
		user, _ := UserOf(r.Context())
		io.WriteString(w, "ran as "+user.Username)
	}))
}

func agentClient(t *testing.T, s *kubeapi.Server, token string) *kube.Client {
	t.Helper()
	client, err := kube.New(&kube.Config{Server: s.URL, CAData: s.CAData, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// TestAuthorizer checks the agent's answers to callers with and without
// gtrace's rights, by RBAC of a real API server.
func TestAuthorizer(t *testing.T) {
	s, tokens := setUp(t)
	auth := &Authorizer{Kube: agentClient(t, s, tokens["agent"]), Node: "node-1"}
	agent := httptest.NewServer(runHandler(auth))
	defer agent.Close()
	blind := httptest.NewServer(runHandler(&Authorizer{Kube: agentClient(t, s, tokens["blind-agent"]), Node: "node-1"}))
	defer blind.Close()

	user := func(name string) string { return "system:serviceaccount:" + testNamespace + ":" + name }
	tests := []struct {
		name   string
		server *httptest.Server
		path   string
		header string
		token  string
		code   int
		body   string
	}{
		{"no token", agent, "/run", "", "", 401, "gtrace agent: no bearer token"},
		{"not a bearer token", agent, "/run", "Authorization", "Basic dXNlcjpwYXNz", 401, "no bearer token"},
		{"invalid token", agent, "/run", "Authorization", "Bearer not-a-token", 401, "gtrace agent: invalid token"},
		{"no right", agent, "/run", "Authorization", "Bearer " + tokens["nobody"], 403,
			`gtrace agent: user "` + user("nobody") + `" may not trace on node "node-1": that needs the verb "trace" on the resource "nodes" of the API group "gtrace.io"`},
		{"right on another node", agent, "/run", "Authorization", "Bearer " + tokens["elsewhere"], 403, "may not trace on node"},
		{"right", agent, "/run", "Authorization", "Bearer " + tokens["tracer"], 200, "ran as " + user("tracer")},
		{"right, through the proxy's header", agent, "/run", TokenHeader, "Bearer " + tokens["tracer"], 200, "ran as " + user("tracer")},
		{"unsafe without its right", agent, "/run?unsafe", "Authorization", "Bearer " + tokens["tracer"], 403,
			`user "` + user("tracer") + `" may not trace-unsafe on node "node-1"`},
		{"unsafe with its right", agent, "/run?unsafe", "Authorization", "Bearer " + tokens["unsafe"], 200, "ran as " + user("unsafe")},
		{"cluster admin", agent, "/run?unsafe", "Authorization", "Bearer " + s.AdminToken, 200, "ran as " + kubeapi.Admin},
		{"agent without review rights", blind, "/run", "Authorization", "Bearer " + tokens["tracer"], 503,
			"gtrace agent: cannot check the token: review a token: tokenreviews.authentication.k8s.io is forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, tt.server.URL+tt.path, strings.NewReader("script"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.header != "" {
				req.Header.Set(tt.header, tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || !strings.Contains(string(body), tt.body) {
				t.Errorf("got %s: %s\nwant %d with %q", resp.Status, body, tt.code, tt.body)
			}
			if tt.code == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

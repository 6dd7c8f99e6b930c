package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gtrace/internal/kubeapi"
)

// TestExecPlugin gets the token from a credential plugin, as the
// kubeconfigs of cloud providers do, and uses it against a real API
// server.
func TestExecPlugin(t *testing.T) {
	s := kubeapi.Start(t)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "get-token")
	if err := os.WriteFile(plugin, []byte(`#!/bin/sh
echo "$@" >> "$STATE/runs"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$STATE/info"
if [ -e "$STATE/fail" ]; then echo "login expired: run cloud login" >&2; exit 1; fi
cat "$STATE/credential"
`), 0o755); err != nil {
		t.Fatal(err)
	}
	credential := func(expires time.Time) {
		t.Helper()
		data := fmt.Sprintf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q,"expirationTimestamp":%q}}`,
			s.AdminToken, expires.UTC().Format(time.RFC3339))
		if err := os.WriteFile(filepath.Join(dir, "credential"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runs := func() int {
		data, _ := os.ReadFile(filepath.Join(dir, "runs"))
		return strings.Count(string(data), "--cluster test\n")
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: test, user: cloud}
clusters:
- name: test
  cluster: {server: %q, certificate-authority: %q}
users:
- name: cloud
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./get-token
      args: [--cluster, test]
      env: [{name: STATE, value: %q}]
`, s.URL, s.CAFile, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadKubeconfig([]string{kubeconfig}, "")
	if err != nil {
		t.Fatal(err)
	}
	client, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// A token valid for an hour serves both requests.
	credential(time.Now().Add(time.Hour))
	for range 2 {
		if _, err := client.ListNodes(ctx, ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := runs(); n != 1 {
		t.Errorf("the plugin ran %d times for two requests with a valid token, want 1", n)
	}
	info, _ := os.ReadFile(filepath.Join(dir, "info"))
	if want := `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`; string(info) != want {
		t.Errorf("KUBERNETES_EXEC_INFO %s, want %s", info, want)
	}

	// An expired one is asked for again, each time.
	client, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	credential(time.Now().Add(-time.Minute))
	for range 2 {
		if _, err := client.ListNodes(ctx, ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := runs(); n != 3 {
		t.Errorf("the plugin ran %d times in all, want 3", n)
	}

	if err := os.WriteFile(filepath.Join(dir, "fail"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = client.ListNodes(ctx, ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "list nodes: credential plugin "+plugin+": exit status 1: login expired: run cloud login") {
		t.Errorf("with a failing plugin: %v", err)
	}
}

package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("ca.crt", "CA")
	write("token", "file-token\n")
	first := write("first", `
current-context: dev
contexts:
- name: dev
  context: {cluster: dev, user: alice, namespace: team}
- name: prod
  context: {cluster: prod, user: bob}
- name: plugin
  context: {cluster: dev, user: carol}
- name: provider
  context: {cluster: dev, user: dave}
clusters:
- name: dev
  cluster: {server: "https://dev:6443", certificate-authority: ca.crt}
users:
- name: alice
  user: {token: alice-token}
- name: carol
  user:
    exec: {command: bin/get-token, args: [--cluster, dev], apiVersion: client.authentication.k8s.io/v1}
- name: dave
  user:
    auth-provider: {name: gcp}
`)
	second := write("second", `
current-context: prod
contexts:
- name: dev
  context: {cluster: prod, user: bob}
clusters:
- name: dev
  cluster: {server: "https://shadowed:6443"}
- name: prod
  cluster: {server: "https://prod:6443", insecure-skip-tls-verify: true, certificate-authority-data: UFJPRC1DQQ==}
users:
- name: bob
  user: {tokenFile: token}
`)
	tests := []struct {
		name    string
		paths   []string
		context string
		want    Config
		err     string
	}{
		{name: "current context", paths: []string{first},
			want: Config{Server: "https://dev:6443", CAData: []byte("CA"), Token: "alice-token", Namespace: "team"}},
		{name: "first file wins", paths: []string{first, second},
			want: Config{Server: "https://dev:6443", CAData: []byte("CA"), Token: "alice-token", Namespace: "team"}},
		{name: "second file's current context", paths: []string{second, first},
			want: Config{Server: "https://prod:6443", CAData: []byte("PROD-CA"), Insecure: true, TokenFile: filepath.Join(dir, "token")}},
		{name: "named context across files", paths: []string{first, second}, context: "prod",
			want: Config{Server: "https://prod:6443", CAData: []byte("PROD-CA"), Insecure: true, TokenFile: filepath.Join(dir, "token")}},
		{name: "missing file skipped", paths: []string{filepath.Join(dir, "none"), first},
			want: Config{Server: "https://dev:6443", CAData: []byte("CA"), Token: "alice-token", Namespace: "team"}},
		{name: "only file missing", paths: []string{filepath.Join(dir, "none")}, err: "read kubeconfig"},
		{name: "no such context", paths: []string{first}, context: "test", err: `no context "test"`},
		{name: "no such cluster", paths: []string{first}, context: "prod", err: `no cluster "prod"`},
		{name: "auth provider", paths: []string{first}, context: "provider", err: "auth-provider plugins are not supported"},
	}
	t.Run("exec plugin", func(t *testing.T) {
		got, err := LoadKubeconfig([]string{first}, "plugin")
		if err != nil {
			t.Fatal(err)
		}
		want := ExecConfig{Command: filepath.Join(dir, "bin/get-token"), Args: []string{"--cluster", "dev"}, APIVersion: "client.authentication.k8s.io/v1"}
		if got.Exec == nil || got.Exec.Command != want.Command || strings.Join(got.Exec.Args, " ") != "--cluster dev" || got.Exec.APIVersion != want.APIVersion {
			t.Errorf("exec: %+v, want %+v", got.Exec, want)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadKubeconfig(tt.paths, tt.context)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Server != tt.want.Server || string(got.CAData) != string(tt.want.CAData) || got.Insecure != tt.want.Insecure ||
				got.Token != tt.want.Token || got.TokenFile != tt.want.TokenFile || got.Namespace != tt.want.Namespace {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestKubeconfigPaths(t *testing.T) {
	t.Setenv("KUBECONFIG", "/a/config"+string(filepath.ListSeparator)+string(filepath.ListSeparator)+"/b/config")
	if got := KubeconfigPaths(); strings.Join(got, ",") != "/a/config,/b/config" {
		t.Errorf("KubeconfigPaths() = %q", got)
	}
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", "/home/test")
	if got := KubeconfigPaths(); strings.Join(got, ",") != "/home/test/.kube/config" {
		t.Errorf("KubeconfigPaths() without KUBECONFIG = %q", got)
	}
}

// The manifests of gtrace agent, checked against Kubernetes' own types
// and applied to a real API server.
package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"gtrace/agent"
	"gtrace/compiler"
	"gtrace/internal/kubeapi"
	"gtrace/internal/testutils"
	"gtrace/kube"
)

// manifest is one object of a file of deploy/.
type manifest struct {
	file string
	kind string
	name string
	obj  any
}

// readManifests decodes every object of deploy/*.yaml strictly into its
// k8s.io/api type: an unknown or repeated field is an error.
func readManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var all []manifest
	separator := regexp.MustCompile(`(?m)^---\s*$`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range separator.Split(string(data), -1) {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s, object %d: %v", file, i+1, err)
			}
			var obj any
			switch meta.Kind {
			case "Namespace":
				obj = &corev1.Namespace{}
			case "ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "ConfigMap":
				obj = &corev1.ConfigMap{}
			case "DaemonSet":
				obj = &appsv1.DaemonSet{}
			case "ClusterRole":
				obj = &rbacv1.ClusterRole{}
			case "ClusterRoleBinding":
				obj = &rbacv1.ClusterRoleBinding{}
			case "Role":
				obj = &rbacv1.Role{}
			default:
				t.Fatalf("%s, object %d: unexpected kind %q", file, i+1, meta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s, object %d (%s): %v", file, i+1, meta.Kind, err)
			}
			m := manifest{file: file, kind: meta.Kind, obj: obj}
			if o, ok := obj.(metav1.Object); ok {
				m.name = o.GetName()
			}
			all = append(all, m)
		}
	}
	return all
}

func find[T any](t *testing.T, all []manifest, kind, name string) T {
	t.Helper()
	for _, m := range all {
		if m.kind == kind && m.name == name {
			return m.obj.(T)
		}
	}
	t.Fatalf("no %s %s in deploy/", kind, name)
	panic("unreachable")
}

// TestManifests checks what the agent needs of its DaemonSet and roles.
func TestManifests(t *testing.T) {
	all := readManifests(t)
	ds := find[*appsv1.DaemonSet](t, all, "DaemonSet", "gtrace-agent")
	pod := ds.Spec.Template.Spec
	if !pod.HostPID || pod.ServiceAccountName != "gtrace-agent" || len(pod.Containers) != 1 {
		t.Fatalf("the agent's pod: hostPID %v, service account %q, %d containers", pod.HostPID, pod.ServiceAccountName, len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Error("the agent is not privileged")
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9741 || !slices.Contains(c.Args, "--listen=:9741") {
		t.Errorf("the agent's port: %+v, args %q", c.Ports, c.Args)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" || p.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.HTTPGet.Port.String() != c.Ports[0].Name {
		t.Errorf("the agent's readiness probe: %+v", p)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range pod.Volumes {
		switch {
		case v.HostPath != nil && v.HostPath.Path == "/sys" && mounts[v.Name] == "/sys":
			delete(mounts, v.Name)
		case v.ConfigMap != nil && v.ConfigMap.Name == "gtrace-scripts" && mounts[v.Name] == "/etc/gtrace/scripts":
			delete(mounts, v.Name)
		}
	}
	if len(mounts) != 0 || len(pod.Volumes) != 2 {
		t.Errorf("the agent's volumes: %+v, mounts %+v", pod.Volumes, c.VolumeMounts)
	}
	find[*corev1.ConfigMap](t, all, "ConfigMap", "gtrace-scripts")

	user := find[*rbacv1.ClusterRole](t, all, "ClusterRole", "gtrace-user")
	// The right to trace, and to read the nodes that kubectl gtrace run
	// -l selects.
	if len(user.Rules) != 2 || !slices.Equal(user.Rules[0].APIGroups, []string{agent.Group}) ||
		!slices.Equal(user.Rules[0].Resources, []string{agent.Resource}) || !slices.Equal(user.Rules[0].Verbs, []string{agent.VerbTrace}) ||
		!slices.Equal(user.Rules[1].APIGroups, []string{""}) || !slices.Equal(user.Rules[1].Resources, []string{"nodes"}) ||
		!slices.Equal(user.Rules[1].Verbs, []string{"get", "list"}) {
		t.Errorf("gtrace-user's rules: %+v", user.Rules)
	}
}

// TestStandingScripts compiles the scripts of the ConfigMap
// gtrace-scripts against this machine's kernel.
func TestStandingScripts(t *testing.T) {
	testutils.RequireRoot(t)
	scripts := find[*corev1.ConfigMap](t, readManifests(t), "ConfigMap", "gtrace-scripts")
	if len(scripts.Data) == 0 {
		t.Fatal("gtrace-scripts holds no script")
	}
	for key, src := range scripts.Data {
		if !strings.HasSuffix(key, ".bt") {
			t.Errorf("gtrace-scripts: key %q is not a .bt script", key)
			continue
		}
		if _, err := compiler.Compile([]byte(src), &compiler.Options{Name: key}); err != nil {
			var located *compiler.Error
			if errors.As(err, &located) {
				var msg strings.Builder
				located.Render(&msg)
				t.Errorf("gtrace-scripts:\n%s", msg.String())
			} else {
				t.Errorf("gtrace-scripts: %s: %v", key, err)
			}
		}
	}
}

// TestApply applies deploy/ to a real API server with kubectl, as a user
// does, and then checks that the agent's service account may review its
// callers and that gtrace-user grants what the agent asks for.
func TestApply(t *testing.T) {
	s := kubeapi.Start(t)
	admin := s.Kubeconfig(t, s.AdminToken)
	out, err := s.RunKubectl(admin, "apply", "-f", ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range readManifests(t) {
		// kubectl names a kind with its API group: daemonset.apps/NAME.
		want := regexp.MustCompile(fmt.Sprintf(`(?m)^%s(\.[a-z0-9.]+)?/%s created$`, strings.ToLower(m.kind), regexp.QuoteMeta(m.name)))
		if !want.MatchString(out) {
			t.Errorf("kubectl apply did not say %s/%s created:\n%s", strings.ToLower(m.kind), m.name, out)
		}
	}
	// No controller manager runs: the DaemonSet is stored, no pod made.
	out, err = s.RunKubectl(admin, "-n", "gtrace", "get", "daemonset", "gtrace-agent", "-o", "jsonpath={.spec.template.spec.containers[0].securityContext.privileged}")
	if err != nil || out != "true" {
		t.Fatalf("the stored DaemonSet: %q, %v", out, err)
	}

	agentToken := s.ServiceAccountToken(t, "gtrace", "gtrace-agent")
	client, err := kube.New(&kube.Config{Server: s.URL, CAData: s.CAData, Token: agentToken})
	if err != nil {
		t.Fatal(err)
	}
	auth := &agent.Authorizer{Kube: client, Node: "node-1"}
	server := httptest.NewServer(auth.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("unsafe") && !auth.AllowUnsafe(w, r) {
			return
		}
		w.Write([]byte("ok"))
	})))
	defer server.Close()

	s.CreateNamespace(t, "team")
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		tokens[name] = s.CreateServiceAccount(t, "team", name)
	}
	for _, bind := range [][]string{
		{"create", "clusterrolebinding", "alice-gtrace", "--clusterrole=gtrace-user", "--serviceaccount=team:alice"},
		{"create", "clusterrolebinding", "carol-gtrace", "--clusterrole=gtrace-unsafe-user", "--serviceaccount=team:carol"},
	} {
		if _, err := s.RunKubectl(admin, bind...); err != nil {
			t.Fatal(err)
		}
	}
	// The question the agent asks, as the guide shows it.
	review := filepath.Join(t.TempDir(), "review.yaml")
	if err := os.WriteFile(review, []byte(`apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: system:serviceaccount:team:alice
  resourceAttributes: {group: gtrace.io, resource: nodes, verb: trace, name: node-1}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = s.RunKubectl(admin, "create", "-f", review, "-o", "jsonpath={.status.allowed}")
	if err != nil || out != "true" {
		t.Errorf("kubectl create of alice's SubjectAccessReview: %q, %v", out, err)
	}
	tests := []struct {
		user   string
		unsafe bool
		code   int
	}{
		{"alice", false, 200},
		{"alice", true, 403},
		{"bob", false, 403},
		{"carol", false, 200},
		{"carol", true, 200},
	}
	for _, tt := range tests {
		path := "/run"
		if tt.unsafe {
			path += "?unsafe"
		}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, server.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tokens[tt.user])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("%s, unsafe %v: %s: %s, want %d", tt.user, tt.unsafe, resp.Status, body.String(), tt.code)
		}
	}
}

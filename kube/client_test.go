package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gtrace/internal/kubeapi"
)

// TestAPIServer runs the client against a real kube-apiserver: nodes and
// pods that the test creates (no kubelet runs them), and the reviews.
func TestAPIServer(t *testing.T) {
	s := kubeapi.Start(t)
	ctx := context.Background()
	const ns = "gtrace-client"
	s.CreateNamespace(t, ns)
	// Pods need their namespace's default service account, which no
	// controller manager makes here.
	s.CreateServiceAccount(t, ns, "default")
	for _, node := range []struct{ name, zone string }{{"node-a", "east"}, {"node-b", "west"}, {"node-c", "east"}} {
		s.Create(t, "/api/v1/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: node.name, Labels: map[string]string{"zone": node.zone},
		}})
	}
	for _, pod := range []struct{ name, node, app string }{{"a1", "node-a", "web"}, {"a2", "node-a", "db"}, {"b1", "node-b", "web"}} {
		s.Create(t, "/api/v1/namespaces/"+ns+"/pods", &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod.name, Labels: map[string]string{"app": pod.app}},
			Spec: corev1.PodSpec{
				NodeName: pod.node,
				Containers: []corev1.Container{{Name: "main", Image: "example.invalid/none",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}},
			},
		})
	}

	cfg, err := LoadKubeconfig([]string{s.Kubeconfig(t, s.AdminToken)}, "")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("nodes", func(t *testing.T) {
		node, err := admin.GetNode(ctx, "node-b")
		if err != nil {
			t.Fatal(err)
		}
		if node.Metadata.Labels["zone"] != "west" {
			t.Errorf("node-b's labels: %v", node.Metadata.Labels)
		}
		list, err := admin.ListNodes(ctx, ListOptions{LabelSelector: "zone=east"})
		if err != nil {
			t.Fatal(err)
		}
		if got := nodeNames(list.Items); !slices.Equal(got, []string{"node-a", "node-c"}) {
			t.Errorf("nodes in zone east: %q", got)
		}
	})

	t.Run("pods", func(t *testing.T) {
		tests := []struct {
			name      string
			namespace string
			opts      ListOptions
			want      []string
		}{
			{"all namespaces", "", ListOptions{}, []string{"a1", "a2", "b1"}},
			{"on a node", ns, ListOptions{FieldSelector: "spec.nodeName=node-a"}, []string{"a1", "a2"}},
			{"by label", "", ListOptions{LabelSelector: "app=web"}, []string{"a1", "b1"}},
			{"both", ns, ListOptions{LabelSelector: "app=web", FieldSelector: "spec.nodeName=node-b"}, []string{"b1"}},
			{"none", "default", ListOptions{}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				list, err := admin.ListPods(ctx, tt.namespace, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, pod := range list.Items {
					got = append(got, pod.Metadata.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Errorf("pods %q, want %q", got, tt.want)
				}
			})
		}
		pod, err := admin.GetPod(ctx, ns, "a2")
		if err != nil {
			t.Fatal(err)
		}
		if pod.Spec.NodeName != "node-a" || pod.Metadata.Labels["app"] != "db" || pod.Metadata.Namespace != ns ||
			len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Ports[0].ContainerPort != 8080 {
			t.Errorf("pod a2: %+v", pod)
		}
	})

	t.Run("status", func(t *testing.T) {
		// What a kubelet would report, set by hand.
		var pod corev1.Pod
		path := "/api/v1/namespaces/" + ns + "/pods/a1"
		if err := s.Do(http.MethodGet, path, nil, &pod); err != nil {
			t.Fatal(err)
		}
		pod.Status = corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      "10.1.2.3",
			PodIPs:     []corev1.PodIP{{IP: "10.1.2.3"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "main", ContainerID: "containerd://0123abcd", Ready: true, Image: "example.invalid/none",
			}},
		}
		if err := s.Do(http.MethodPut, path+"/status", &pod, nil); err != nil {
			t.Fatal(err)
		}
		got, err := admin.GetPod(ctx, ns, "a1")
		if err != nil {
			t.Fatal(err)
		}
		want := PodStatus{
			Phase:             "Running",
			PodIP:             "10.1.2.3",
			Conditions:        []PodCondition{{Type: "Ready", Status: "True"}},
			ContainerStatuses: []ContainerStatus{{Name: "main", ContainerID: "containerd://0123abcd", Ready: true}},
		}
		if !reflect.DeepEqual(got.Status, want) {
			t.Errorf("pod a1's status: %+v, want %+v", got.Status, want)
		}

		var node corev1.Node
		if err := s.Do(http.MethodGet, "/api/v1/nodes/node-a", nil, &node); err != nil {
			t.Fatal(err)
		}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}}
		node.Status.NodeInfo = corev1.NodeSystemInfo{KernelVersion: "6.18.0", OSImage: "Debian", Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.1"}
		if err := s.Do(http.MethodPut, "/api/v1/nodes/node-a/status", &node, nil); err != nil {
			t.Fatal(err)
		}
		gotNode, err := admin.GetNode(ctx, "node-a")
		if err != nil {
			t.Fatal(err)
		}
		wantNode := NodeStatus{
			Addresses: []NodeAddress{{Type: "InternalIP", Address: "10.0.0.7"}},
			NodeInfo:  NodeInfo{KernelVersion: "6.18.0", OSImage: "Debian", ContainerRuntimeVersion: "containerd://2.1", Architecture: "amd64"},
		}
		if !reflect.DeepEqual(gotNode.Status, wantNode) {
			t.Errorf("node-a's status: %+v, want %+v", gotNode.Status, wantNode)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := admin.GetPod(ctx, ns, "missing")
		var status *StatusError
		if !errors.As(err, &status) || status.Code != http.StatusNotFound || status.Reason != "NotFound" {
			t.Fatalf("getting a missing pod: %v, want a NotFound StatusError", err)
		}
		if want := `get pod gtrace-client/missing: pods "missing" not found (404 NotFound)`; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}

		token := s.CreateServiceAccount(t, ns, "nobody")
		nobody, err := New(&Config{Server: s.URL, CAData: s.CAData, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		_, err = nobody.ListNodes(ctx, ListOptions{})
		if !errors.As(err, &status) || status.Code != http.StatusForbidden ||
			!strings.Contains(err.Error(), `User "system:serviceaccount:gtrace-client:nobody" cannot list resource "nodes"`) {
			t.Errorf("listing nodes without the right: %v", err)
		}

		wrongCA, err := New(&Config{Server: s.URL, Token: s.AdminToken})
		if err != nil {
			t.Fatal(err)
		}
		_, err = wrongCA.ListNodes(ctx, ListOptions{})
		var unknown x509.UnknownAuthorityError
		if err == nil || !errors.As(err, &unknown) {
			t.Errorf("without the CA: %v, want a certificate error", err)
		}
	})

	t.Run("token review", func(t *testing.T) {
		token := s.CreateServiceAccount(t, ns, "reviewed")
		status, err := admin.ReviewToken(ctx, token, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !status.Authenticated || status.User.Username != "system:serviceaccount:gtrace-client:reviewed" ||
			!slices.Contains(status.User.Groups, "system:serviceaccounts:gtrace-client") {
			t.Errorf("review of a service account's token: %+v", status)
		}
		status, err = admin.ReviewToken(ctx, "not-a-token", nil)
		if err != nil {
			t.Fatal(err)
		}
		if status.Authenticated {
			t.Errorf("review of a bad token: %+v", status)
		}
	})

	t.Run("access review", func(t *testing.T) {
		tests := []struct {
			user   string
			groups []string
			verb   string
			want   bool
		}{
			{kubeapi.Admin, []string{"system:masters"}, "delete", true},
			{"system:serviceaccount:gtrace-client:nobody", nil, "list", false},
			{"someone", []string{"system:authenticated"}, "create", false},
		}
		for _, tt := range tests {
			status, err := admin.ReviewAccess(ctx, AccessReviewSpec{
				User: tt.user, Groups: tt.groups,
				ResourceAttributes: &ResourceAttributes{Verb: tt.verb, Resource: "nodes"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if status.Allowed != tt.want {
				t.Errorf("may %s %s nodes: %+v, want allowed %v", tt.user, tt.verb, status, tt.want)
			}
		}
	})

	t.Run("in cluster", func(t *testing.T) {
		dir := t.TempDir()
		token := s.CreateServiceAccount(t, ns, "in-pod")
		s.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", map[string]any{
			"metadata": map[string]any{"name": "pod-reader"},
			"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get", "list"}}},
		})
		s.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", map[string]any{
			"metadata": map[string]any{"name": "in-pod-reads-pods"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "in-pod", "namespace": ns}},
		})
		for name, data := range map[string][]byte{"token": []byte(token), "ca.crt": s.CAData, "namespace": []byte(ns)} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(u.Host)
		t.Setenv("KUBERNETES_SERVICE_HOST", host)
		t.Setenv("KUBERNETES_SERVICE_PORT", port)
		cfg, err := inClusterConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Namespace != ns {
			t.Errorf("namespace %q, want %q", cfg.Namespace, ns)
		}
		client, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		list, err := client.ListPods(ctx, cfg.Namespace, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 3 {
			t.Errorf("%d pods in %s, want 3", len(list.Items), ns)
		}
		// The token is read again for each request: a rotated token
		// replaces it, and a bad one is refused.
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte("rotated-away"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = client.ListPods(ctx, cfg.Namespace, ListOptions{})
		var status *StatusError
		if !errors.As(err, &status) || status.Code != http.StatusUnauthorized {
			t.Errorf("with a bad token in the file: %v, want 401", err)
		}

		t.Setenv("KUBERNETES_SERVICE_HOST", "")
		if _, err := inClusterConfig(dir); err == nil || !strings.Contains(err.Error(), "not in a Kubernetes pod") {
			t.Errorf("outside a pod: %v", err)
		}
	})
}

func nodeNames(nodes []Node) []string {
	var names []string
	for _, node := range nodes {
		names = append(names, node.Metadata.Name)
	}
	slices.Sort(names)
	return names
}

package fleet

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gtrace/internal/kubeapi"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// agentNamespace and agentPort are those of deploy/.
const (
	agentNamespace = "gtrace"
	agentPort      = 9741
)

// cluster is an API server with deploy/'s manifests applied, and
// simulated nodes, each running gtrace agent as its pod would.
type cluster struct {
	api   *kubeapi.Server
	nodes []simNode
	// path is a PATH with kubectl-gtrace, a link to gtrace, first.
	path string
}

// simNode is a node that no kubelet runs: the test makes its pod's
// network and starts its agent.
type simNode struct {
	name  string
	podIP string
	netns string
}

// startCluster starts an API server, applies deploy/, and starts n
// simulated nodes with an agent each, running the standing scripts of
// the directory scripts if it is not "".
func startCluster(t *testing.T, n int, scripts string) *cluster {
	t.Helper()
	testutils.RequireRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		testutils.Skip(t, "ip is not installed (Debian: iproute2)")
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		testutils.Skip(t, "nsenter is not installed (Debian: util-linux)")
	}
	api := kubeapi.Start(t)
	admin := api.Kubeconfig(t, api.AdminToken)
	if out, err := api.RunKubectl(admin, "apply", "-f", "../../deploy/"); err != nil {
		t.Fatalf("apply deploy/: %v\n%s", err, out)
	}
	agentToken := api.ServiceAccountToken(t, agentNamespace, "gtrace-agent")

	dir := t.TempDir()
	if err := os.Symlink(harness.Bin(), filepath.Join(dir, "kubectl-gtrace")); err != nil {
		t.Fatal(err)
	}
	c := &cluster{api: api, path: dir + ":" + os.Getenv("PATH")}
	// kubectl finds its plugins on PATH.
	t.Setenv("PATH", c.path)
	// A /30 for each node's pod, in a range picked at random so that
	// tests running at once do not clash.
	b := make([]byte, 1)
	rand.Read(b)
	for i := 1; i <= n; i++ {
		node := simNode{name: fmt.Sprintf("node-%d", i)}
		host := fmt.Sprintf("10.214.%d.%d", b[0], 4*i+1)
		node.podIP = fmt.Sprintf("10.214.%d.%d", b[0], 4*i+2)
		node.netns = fmt.Sprintf("gtf%02x%d", b[0], i)
		testutils.NetnsVeth(t, node.netns, host, node.podIP)
		c.nodes = append(c.nodes, node)
		c.startAgent(t, node, c.agentKubeconfig(t, host, agentToken), scripts)
		c.createNode(t, node)
		c.createAgentPod(t, node)
	}
	return c
}

// agentKubeconfig writes the kubeconfig of the agents of the nodes whose
// pods' network has hostIP on the host's end. The API server listens on
// loopback, out of the pods' reach: a forwarder on hostIP stands for the
// Service through which pods reach it.
func (c *cluster) agentKubeconfig(t *testing.T, hostIP, token string) string {
	t.Helper()
	apiAddr := strings.TrimPrefix(c.api.URL, "https://")
	l, err := net.Listen("tcp", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				api, err := net.Dial("tcp", apiAddr)
				if err != nil {
					return
				}
				defer api.Close()
				go func() { io.Copy(api, conn); api.(*net.TCPConn).CloseWrite() }()
				io.Copy(conn, api)
			}()
		}
	}()
	apiHost, _, _ := net.SplitHostPort(apiAddr)
	config := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "agent",
		"clusters": []any{map[string]any{"name": "test", "cluster": map[string]any{
			"server": "https://" + l.Addr().String(), "certificate-authority": c.api.CAFile, "tls-server-name": apiHost,
		}}},
		"users":    []any{map[string]any{"name": "agent", "user": map[string]any{"token": token}}},
		"contexts": []any{map[string]any{"name": "agent", "context": map[string]any{"cluster": "test", "user": "agent"}}},
	}
	data, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startAgent runs gtrace agent in node's network namespace, as the
// DaemonSet's pod would run it, until t ends.
func (c *cluster) startAgent(t *testing.T, node simNode, kubeconfig, scripts string) {
	t.Helper()
	// nsenter enters the network namespace alone, where ip netns exec
	// would also mount a /sys of the namespace's own: the DaemonSet
	// mounts the host's /sys, with its cgroup hierarchy.
	cmd := exec.Command("nsenter", "--net=/run/netns/"+node.netns, harness.Bin(), "agent",
		fmt.Sprintf("--listen=%s:%d", node.podIP, agentPort), "--node="+node.name, "--kubeconfig="+kubeconfig)
	if scripts != "" {
		cmd.Args = append(cmd.Args, "--scripts="+scripts)
	}
	lines := harness.StartWait(t, cmd, harness.Stderr, func(l string) bool {
		return strings.Contains(l, "listening on")
	}, nil)
	go harness.Drain(lines)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
}

// createNode creates the Node object with the status a kubelet reports.
func (c *cluster) createNode(t *testing.T, node simNode) {
	t.Helper()
	path := "/api/v1/nodes/" + node.name
	c.api.Create(t, "/api/v1/nodes", map[string]any{
		"metadata": map[string]any{"name": node.name, "labels": map[string]string{
			"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux", "fleet.gtrace.test/index": node.name[len("node-"):],
		}},
	})
	var obj map[string]any
	if err := c.api.Do(http.MethodGet, path, nil, &obj); err != nil {
		t.Fatal(err)
	}
	obj["status"] = map[string]any{
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady"}},
		"addresses":  []any{map[string]any{"type": "Hostname", "address": node.name}},
	}
	if err := c.api.Do(http.MethodPut, path+"/status", obj, nil); err != nil {
		t.Fatal(err)
	}
}

// createAgentPod creates the DaemonSet's pod on node, with the status a
// kubelet sets once its container is ready: no controller runs here to
// create it.
func (c *cluster) createAgentPod(t *testing.T, node simNode) {
	t.Helper()
	name := "gtrace-agent-" + node.name
	path := "/api/v1/namespaces/" + agentNamespace + "/pods/" + name
	c.api.Create(t, "/api/v1/namespaces/"+agentNamespace+"/pods", map[string]any{
		"metadata": map[string]any{"name": name, "labels": map[string]string{"app.kubernetes.io/name": "gtrace-agent"}},
		"spec": map[string]any{
			"nodeName":           node.name,
			"serviceAccountName": "gtrace-agent",
			"hostPID":            true,
			"containers": []any{map[string]any{
				"name": "agent", "image": "gtrace:latest",
				"args":  []string{"agent", fmt.Sprintf("--listen=:%d", agentPort), "--node=" + node.name},
				"ports": []any{map[string]any{"name": "api", "containerPort": agentPort}},
			}},
		},
	})
	var obj map[string]any
	if err := c.api.Do(http.MethodGet, path, nil, &obj); err != nil {
		t.Fatal(err)
	}
	obj["status"] = map[string]any{
		"phase":  "Running",
		"podIP":  node.podIP,
		"podIPs": []any{map[string]any{"ip": node.podIP}},
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True"},
			map[string]any{"type": "ContainersReady", "status": "True"},
		},
		"containerStatuses": []any{map[string]any{"name": "agent", "ready": true, "restartCount": 0, "image": "gtrace:latest", "imageID": "", "started": true,
			"state": map[string]any{"running": map[string]any{}}}},
	}
	if err := c.api.Do(http.MethodPut, path+"/status", obj, nil); err != nil {
		t.Fatal(err)
	}
}

// user creates a service account of the namespace "users" bound to the
// ClusterRole role of deploy/ (none if ""), and to the Role gtrace-user
// that lets it find and reach the agents; it returns a kubeconfig for it.
func (c *cluster) user(t *testing.T, name, role string) string {
	t.Helper()
	const ns = "users"
	var existing map[string]any
	if c.api.Do(http.MethodGet, "/api/v1/namespaces/"+ns, nil, &existing) != nil {
		c.api.CreateNamespace(t, ns)
	}
	token := c.api.CreateServiceAccount(t, ns, name)
	subject := []any{map[string]any{"kind": "ServiceAccount", "name": name, "namespace": ns}}
	if role != "" {
		c.api.Create(t, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{
			"metadata": map[string]any{"name": "test-" + name},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
			"subjects": subject,
		})
	}
	c.api.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+agentNamespace+"/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "test-" + name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gtrace-user"},
		"subjects": subject,
	})
	return c.api.Kubeconfig(t, token)
}

// kubectl runs kubectl as the user of kubeconfig, with kubectl-gtrace on
// its PATH.
func (c *cluster) kubectl(kubeconfig string, args ...string) *exec.Cmd {
	cmd := exec.Command(c.api.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+c.path)
	return cmd
}

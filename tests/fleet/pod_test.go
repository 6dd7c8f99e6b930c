package fleet

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gtrace/container"
	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// podContainerID is the runtime's id of the container of the test's pod.
const podContainerID = "f1ee7c0de0123456789abcdef0123456789abcdef0123456789abcdef0123456"

// TestRunPod runs a program on a pod with kubectl gtrace run pod/NAME
// --container NAME: on the pod's node alone, counting only the tasks of
// its container, which the test lays out in cgroup v2 as the kubelet's
// systemd driver does, under the UID the API server gave the pod. The
// same workload outside the pod is not counted.
func TestRunPod(t *testing.T) {
	c := startCluster(t, 3, "")
	tracer := c.user(t, "tracer", "gtrace-user")
	// The tracer may read the pods of the namespace apps.
	c.api.CreateNamespace(t, "apps")
	// No controller manager makes the namespace's default service
	// account, which the pod runs as.
	c.api.Create(t, "/api/v1/namespaces/apps/serviceaccounts", map[string]any{"metadata": map[string]any{"name": "default"}})
	c.api.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/apps/roles", map[string]any{
		"metadata": map[string]any{"name": "pod-reader"},
		"rules":    []any{map[string]any{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get"}}},
	})
	c.api.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/apps/rolebindings", map[string]any{
		"metadata": map[string]any{"name": "tracer-pod-reader"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "tracer", "namespace": "users"}},
	})
	uid := c.createAppPod(t, "apps", "web", "node-2")
	scope := makePodCgroup(t, uid)

	dd := copyDD(t)
	// The pod's container: a shell in its cgroup, which runs dd once
	// released.
	const inside, blocks = 3, 4
	shell := exec.Command("sh", "-c", fmt.Sprintf(
		`read go; i=0; while [ $i -lt %d ]; do '%s' if=/dev/zero of=/dev/null bs=100 count=%d status=none; i=$((i+1)); done`, inside, dd, blocks))
	release := testutils.StartHeld(t, shell)
	testutils.MoveToCgroup(t, scope, shell.Process.Pid)

	program := `BEGIN { printf("container pid %d\n", $container_pid); }
	tracepoint:syscalls:sys_enter_read /comm == "` + workloadComm + `" && args.fd == 0/ { @reads = count(); }`
	cmd := c.kubectl(tracer, "gtrace", "run", "pod/web", "--pod-namespace", "apps", "--container", "app", "-e", program)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	lines := harness.StartWait(t, cmd, harness.Stderr, func(l string) bool {
		return l == "[node-2] Attached 2 probes"
	}, nil)
	go harness.Drain(lines)
	release.Write([]byte("go\n"))
	release.Close()
	if err := shell.Wait(); err != nil {
		t.Fatalf("the pod's workload: %v", err)
	}
	// The same workload outside the pod.
	if out, err := exec.Command(dd, "if=/dev/zero", "of=/dev/null", "bs=100", "count=5", "status=none").CombinedOutput(); err != nil {
		t.Fatalf("dd: %v\n%s", err, out)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kubectl gtrace: %v\n%s", err, stdout.String())
	}
	out := stdout.String()
	want := []string{
		fmt.Sprintf("[node-2] container pid %d", shell.Process.Pid),
		fmt.Sprintf("@reads: %d", inside*blocks),
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("no line %q in the output:\n%s", w, out)
		}
	}
	if strings.Contains(out, "[node-1]") || strings.Contains(out, "[node-3]") {
		t.Errorf("the program ran on other nodes than the pod's:\n%s", out)
	}
}

// createAppPod creates the pod namespace/name on node with the status a
// kubelet sets once its container "app" runs, and returns its UID.
func (c *cluster) createAppPod(t *testing.T, namespace, name, node string) string {
	t.Helper()
	path := "/api/v1/namespaces/" + namespace + "/pods/" + name
	c.api.Create(t, "/api/v1/namespaces/"+namespace+"/pods", map[string]any{
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"nodeName":   node,
			"containers": []any{map[string]any{"name": "app", "image": "example.invalid/app"}},
		},
	})
	var obj map[string]any
	if err := c.api.Do(http.MethodGet, path, nil, &obj); err != nil {
		t.Fatal(err)
	}
	obj["status"] = map[string]any{
		"phase":      "Running",
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		"containerStatuses": []any{map[string]any{"name": "app", "ready": true, "restartCount": 0, "image": "example.invalid/app", "imageID": "",
			"containerID": "containerd://" + podContainerID, "started": true, "state": map[string]any{"running": map[string]any{}}}},
	}
	if err := c.api.Do(http.MethodPut, path+"/status", obj, nil); err != nil {
		t.Fatal(err)
	}
	return obj["metadata"].(map[string]any)["uid"].(string)
}

// makePodCgroup lays out the cgroups of pod uid with its container
// podContainerID as the kubelet's systemd driver does, below a
// directory of the test's, and returns the container's directory. They
// are removed when the test ends, the processes left in them moved to
// the hierarchy's root first.
func makePodCgroup(t *testing.T, uid string) string {
	t.Helper()
	testutils.RequireRoot(t)
	root, err := container.V2Root("/proc/mounts")
	if err != nil {
		testutils.Skip(t, err.Error())
	}
	top := fmt.Sprintf("gtrace-fleet-%d", os.Getpid())
	pod := filepath.Join(top, "kubepods.slice", "kubepods-burstable.slice",
		"kubepods-burstable-pod"+strings.ReplaceAll(uid, "-", "_")+".slice")
	scope := filepath.Join(pod, "cri-containerd-"+podContainerID+".scope")
	testutils.MakeCgroups(t, root, top, filepath.Dir(filepath.Dir(pod)), filepath.Dir(pod), pod, scope)
	return filepath.Join(root, scope)
}

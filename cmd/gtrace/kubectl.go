package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gtrace/agent"
	"gtrace/kube"
	"gtrace/mapmerge"
	"gtrace/output"
)

// kubectlName is the name under which gtrace is the kubectl plugin
// `kubectl gtrace`: kubectl runs kubectl-gtrace from PATH.
const kubectlName = "kubectl-gtrace"

const kubectlUsage = `USAGE:
    kubectl gtrace run TARGET -e PROGRAM [OPTIONS] [ARGS...]

Runs a gtrace program on nodes of a Kubernetes cluster at once, through
the gtrace agent that deploy/ runs on every node, reached through the
API server's pod proxy. It prints each line the program prints prefixed
with its node, and at the end the maps of all nodes merged exactly: the
counts, sums and histogram buckets added, as if one machine had seen
every event. Ctrl-C stops the program on every node and still prints the
maps; a second Ctrl-C leaves at once.

TARGET:
    node/NAME           the node NAME
    pod/NAME            the pod NAME (of --pod-namespace), on its node: only
                        its tasks, found by its cgroup; $container_pid is
                        its first process
    -l SELECTOR         the nodes that the label selector selects
    --all-nodes, -a     every node that runs an agent

OPTIONS:
    -e PROGRAM          the program
    --per-node          print each node's maps side by side, keyed by node,
                        instead of merged
    --deadline D        stop after D (such as 30s or 5m; default 1h, the most)
    --unsafe            allow unsafe builtins (needs the verb trace-unsafe)
    --namespace NS      the namespace of the agents (default gtrace)
    --pod-namespace NS  the namespace of pod/NAME (default the kubeconfig's)
    --container NAME    with pod/NAME, only its container NAME
    --kubeconfig FILE   the kubeconfig (default $KUBECONFIG, ~/.kube/config)
    --context NAME      the kubeconfig's context
    --parallel N        run on at most N nodes at a time (default 100)

The user needs the verb "trace" on the resource "nodes" of the API group
"gtrace.io" for each node, and the rights to list pods of the agents'
namespace and to create pods/proxy there (deploy/10-rbac-users.yaml).
`

// agentLabel selects the agents' pods, as deploy/30-daemonset.yaml
// labels them.
const agentLabel = "app.kubernetes.io/name=gtrace-agent"

// agentPort is the port of the agents' API, unless their pods name
// another "api" port.
const agentPort = 9741

// kubectlOptions are the parsed command line of kubectl gtrace run.
type kubectlOptions struct {
	target                    string // "node/NAME", "pod/NAME", or ""
	selector                  string
	allNodes, perNode, unsafe bool
	program                   string
	args                      []string
	deadline                  time.Duration
	namespace, podNamespace   string
	container                 string // with pod/NAME
	kubeconfig, kubeconfigCtx string
	parallel                  int
}

// isKubectlPlugin reports whether gtrace runs as kubectl-gtrace.
func isKubectlPlugin() bool { return filepath.Base(os.Args[0]) == kubectlName }

// kubectlCmd runs gtrace as the kubectl plugin.
func kubectlCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, kubectlUsage)
		return 0
	}
	if args[0] != "run" {
		fmt.Fprintf(stderr, "ERROR: unknown command %q\n\n%s", args[0], kubectlUsage)
		return 1
	}
	o, err := parseKubectlArgs(args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, kubectlUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, kubectlUsage)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := fleetRun(ctx, o, stdout, stderr); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			return int(code)
		}
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

func parseKubectlArgs(args []string) (*kubectlOptions, error) {
	o := &kubectlOptions{}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.program, "e", "", "")
	fs.StringVar(&o.selector, "l", "", "")
	fs.BoolVar(&o.allNodes, "all-nodes", false, "")
	fs.BoolVar(&o.allNodes, "a", false, "")
	fs.BoolVar(&o.perNode, "per-node", false, "")
	fs.BoolVar(&o.unsafe, "unsafe", false, "")
	fs.DurationVar(&o.deadline, "deadline", 0, "")
	fs.StringVar(&o.namespace, "namespace", "gtrace", "")
	fs.StringVar(&o.podNamespace, "pod-namespace", "", "")
	fs.StringVar(&o.container, "container", "", "")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&o.kubeconfigCtx, "context", "", "")
	fs.IntVar(&o.parallel, "parallel", 100, "")
	operands, err := parseMixed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(operands) > 0 && (strings.HasPrefix(operands[0], "node/") || strings.HasPrefix(operands[0], "pod/")) {
		o.target, operands = operands[0], operands[1:]
	}
	o.args = operands
	targets := 0
	for _, set := range []bool{o.target != "", o.selector != "", o.allNodes} {
		if set {
			targets++
		}
	}
	switch {
	case targets == 0:
		return nil, errors.New("no target: give node/NAME, pod/NAME, -l SELECTOR or --all-nodes")
	case targets > 1:
		return nil, errors.New("give one target: node/NAME, pod/NAME, -l SELECTOR or --all-nodes")
	case o.program == "":
		return nil, errors.New("no program: give it with -e")
	case o.deadline < 0:
		return nil, errors.New("--deadline must not be negative")
	case o.container != "" && !strings.HasPrefix(o.target, "pod/"):
		return nil, errors.New("--container names a container of pod/NAME, which is missing")
	case o.parallel < 1:
		return nil, errors.New("--parallel must be at least 1")
	}
	return o, nil
}

// nodeAgent is the agent that runs a program on one node.
type nodeAgent struct {
	node string
	pod  kube.PodPort
}

// fleetRun runs o's program on its nodes and prints the output.
func fleetRun(ctx context.Context, o *kubectlOptions, stdout, stderr io.Writer) error {
	paths := kube.KubeconfigPaths()
	if o.kubeconfig != "" {
		paths = []string{o.kubeconfig}
	}
	cfg, err := kube.LoadKubeconfig(paths, o.kubeconfigCtx)
	if err != nil {
		return err
	}
	client, err := kube.New(cfg)
	if err != nil {
		return err
	}
	token, err := client.BearerToken(ctx)
	if err != nil {
		return fmt.Errorf("the agents need the user's token: %w", err)
	}
	if o.podNamespace == "" {
		o.podNamespace = cfg.Namespace
	}
	if o.podNamespace == "" {
		o.podNamespace = "default"
	}
	id := make([]byte, 8)
	rand.Read(id)
	req := agent.RunRequest{ID: hex.EncodeToString(id), Program: o.program, Args: o.args,
		Deadline: o.deadline.Seconds(), Unsafe: o.unsafe}
	nodes, err := targetNodes(ctx, client, o, &req)
	if err != nil {
		return err
	}
	agents, err := findAgents(ctx, client, o.namespace, nodes)
	if err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	header := http.Header{agent.TokenHeader: {"Bearer " + token}, "Content-Type": {"application/json"}}

	// The first Ctrl-C asks every agent to stop, as exit() would, and
	// their maps still come; the second cancels every request.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stopping atomic.Bool // nodes not started yet are not started
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
		case <-runCtx.Done():
			return
		}
		stopping.Store(true)
		stop, _ := json.Marshal(agent.StopRequest{ID: req.ID})
		for _, a := range agents {
			go func() {
				resp, err := client.Proxy(runCtx, a.pod, http.MethodPost, "/v1/stop", nil, header, bytes.NewReader(stop))
				if err == nil {
					resp.Body.Close()
				}
			}()
		}
		select {
		case <-sigs:
			cancel()
		case <-runCtx.Done():
		}
	}()

	out := &fleetOutput{stdout: stdout, stderr: stderr, perNode: o.perNode}
	results := make([]nodeResult, len(agents))
	var wg sync.WaitGroup
	slots := make(chan struct{}, o.parallel)
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			if stopping.Load() {
				results[i] = nodeResult{err: errors.New("not run: stopped before its turn (--parallel)")}
				return
			}
			results[i] = runOnNode(runCtx, client, a, header, body, out)
		}()
	}
	wg.Wait()

	failed := false
	for i, r := range results {
		switch {
		case r.err != nil:
			failed = true
			fmt.Fprintf(stderr, "[%s] ERROR: %v\n", agents[i].node, r.err)
		case r.exit != 0:
			failed = true
		}
	}
	if err := out.printMaps(); err != nil {
		return err
	}
	if failed {
		return exitCode(1)
	}
	return nil
}

// targetNodes returns the names of the nodes o targets, nil for every
// node. For a pod, it also sets the pod (and container) that req keeps.
func targetNodes(ctx context.Context, client *kube.Client, o *kubectlOptions, req *agent.RunRequest) (map[string]bool, error) {
	var nodes map[string]bool
	switch {
	case strings.HasPrefix(o.target, "node/"):
		nodes = map[string]bool{strings.TrimPrefix(o.target, "node/"): true}
	case strings.HasPrefix(o.target, "pod/"):
		pod, err := client.GetPod(ctx, o.podNamespace, strings.TrimPrefix(o.target, "pod/"))
		if err != nil {
			return nil, err
		}
		if pod.Spec.NodeName == "" {
			return nil, fmt.Errorf("pod %s/%s is on no node yet", o.podNamespace, pod.Metadata.Name)
		}
		nodes = map[string]bool{pod.Spec.NodeName: true}
		req.PodUID = pod.Metadata.UID
		if o.container != "" {
			if req.ContainerID, err = containerID(pod, o.container); err != nil {
				return nil, err
			}
		}
	case o.selector != "":
		list, err := client.ListNodes(ctx, kube.ListOptions{LabelSelector: o.selector})
		if err != nil {
			return nil, err
		}
		if len(list.Items) == 0 {
			return nil, fmt.Errorf("no node matches the selector %q", o.selector)
		}
		nodes = map[string]bool{}
		for _, n := range list.Items {
			nodes[n.Metadata.Name] = true
		}
	}
	return nodes, nil
}

// containerID returns the runtime's id of pod's container name, from the
// status the kubelet reports (RUNTIME://ID).
func containerID(pod *kube.Pod, name string) (string, error) {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != name {
			continue
		}
		_, id, ok := strings.Cut(c.ContainerID, "://")
		if !ok || id == "" {
			return "", fmt.Errorf("container %s of pod %s/%s has not started", name, pod.Metadata.Namespace, pod.Metadata.Name)
		}
		return id, nil
	}
	return "", fmt.Errorf("pod %s/%s has no container %s", pod.Metadata.Namespace, pod.Metadata.Name, name)
}

// findAgents returns the ready agents in namespace of nodes (of every
// node if nil), by node name.
func findAgents(ctx context.Context, client *kube.Client, namespace string, nodes map[string]bool) ([]nodeAgent, error) {
	pods, err := client.ListPods(ctx, namespace, kube.ListOptions{LabelSelector: agentLabel})
	if err != nil {
		return nil, fmt.Errorf("find the gtrace agents: %w", err)
	}
	byNode := map[string]nodeAgent{}
	for _, p := range pods.Items {
		node := p.Spec.NodeName
		if node == "" || p.Status.Phase != "Running" || !podReady(p) || nodes != nil && !nodes[node] {
			continue
		}
		byNode[node] = nodeAgent{node: node, pod: kube.PodPort{Namespace: namespace, Name: p.Metadata.Name, Port: apiPort(p), HTTPS: true}}
	}
	var missing []string
	for node := range nodes {
		if _, ok := byNode[node]; !ok {
			missing = append(missing, node)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("no ready gtrace agent in namespace %s on node %s", namespace, strings.Join(missing, ", "))
	}
	if len(byNode) == 0 {
		return nil, fmt.Errorf("no ready gtrace agent in namespace %s (pods labeled %s)", namespace, agentLabel)
	}
	agents := make([]nodeAgent, 0, len(byNode))
	for _, a := range byNode {
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].node < agents[j].node })
	return agents, nil
}

func podReady(p kube.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func apiPort(p kube.Pod) int {
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name == "api" {
				return int(port.ContainerPort)
			}
		}
	}
	return agentPort
}

// nodeResult is how a node's run ended.
type nodeResult struct {
	exit int
	err  error
}

// fleetOutput prints the lines of every node, and gathers their maps:
// merged as they come, so that only the merged entries are held, or
// kept whole for --per-node and for maps that have no exact merge.
type fleetOutput struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	perNode        bool
	names          []string // map names, in the order first seen
	mergers        map[string]*mapmerge.Merger
	kept           map[string][]nodeMap
	err            error // the first failed merge
}

// nodeMap is a map of a node.
type nodeMap struct {
	node string
	m    *output.Map
}

func (f *fleetOutput) line(w io.Writer, node, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(w, "[%s] %s\n", node, text)
}

func (f *fleetOutput) addMap(node string, m *output.Map) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mergers == nil {
		f.mergers, f.kept = map[string]*mapmerge.Merger{}, map[string][]nodeMap{}
	}
	mg, merging := f.mergers[m.Name]
	_, keeping := f.kept[m.Name]
	if !merging && !keeping {
		f.names = append(f.names, m.Name)
		if !f.perNode {
			mg, merging = &mapmerge.Merger{}, true
			f.mergers[m.Name] = mg
		}
	}
	if merging {
		err := mg.Add(m)
		if err == nil {
			return
		}
		if !errors.Is(err, mapmerge.ErrNotMergeable) {
			if f.err == nil {
				f.err = err
			}
			return
		}
		delete(f.mergers, m.Name)
	}
	f.kept[m.Name] = append(f.kept[m.Name], nodeMap{node, m})
}

// maxMessage bounds one line of an agent's answer: a map of a million
// keys fits.
const maxMessage = 1 << 30

// runOnNode runs the program on a's node and streams its answer to out.
func runOnNode(ctx context.Context, client *kube.Client, a nodeAgent, header http.Header, body []byte, out *fleetOutput) nodeResult {
	resp, err := client.Proxy(ctx, a.pod, http.MethodPost, "/v1/run", nil, header, bytes.NewReader(body))
	if err != nil {
		return nodeResult{err: err}
	}
	if resp.StatusCode/100 != 2 {
		return nodeResult{err: kube.ResponseError(resp)}
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64<<10), maxMessage)
	for scanner.Scan() {
		var m agent.Message
		if err := json.Unmarshal(scanner.Bytes(), &m); err != nil {
			return nodeResult{err: fmt.Errorf("read the agent's answer: %w", err)}
		}
		switch m.Type {
		case "line":
			out.line(out.stdout, a.node, m.Text)
		case "stderr":
			out.line(out.stderr, a.node, m.Text)
		case "map":
			decoded, err := mapmerge.Decode(m.Map)
			if err != nil {
				return nodeResult{err: err}
			}
			out.addMap(a.node, decoded)
		case "end":
			if m.Exit == nil {
				return nodeResult{err: errors.New("the agent's answer ends without an exit code")}
			}
			return nodeResult{exit: *m.Exit}
		}
	}
	if err := scanner.Err(); err != nil {
		return nodeResult{err: fmt.Errorf("read the agent's answer: %w", err)}
	}
	return nodeResult{err: errors.New("the agent's answer ended early")}
}

// printMaps prints the maps of every node, merged or per node, as
// gtrace prints a program's maps at its end.
func (f *fleetOutput) printMaps() error {
	if f.err != nil {
		return f.err
	}
	if len(f.names) == 0 {
		return nil
	}
	printer := output.NewText(f.stdout, f.stderr)
	printer.End()
	sort.Strings(f.names)
	for _, name := range f.names {
		var m *output.Map
		if mg := f.mergers[name]; mg != nil {
			m = mg.Map()
		} else {
			kept := f.kept[name]
			sort.SliceStable(kept, func(i, j int) bool { return kept[i].node < kept[j].node })
			nodes, maps := make([]string, len(kept)), make([]*output.Map, len(kept))
			for i, k := range kept {
				nodes[i], maps[i] = k.node, k.m
			}
			var err error
			if m, err = mapmerge.PerNode(nodes, maps); err != nil {
				return err
			}
		}
		if err := printer.Map(m, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

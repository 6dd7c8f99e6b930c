package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"gtrace/agent"
	"gtrace/compiler"
	"gtrace/kube"
	"gtrace/runtime"
)

const agentUsage = `USAGE:
    gtrace agent --listen ADDR --node NAME [--scripts DIR] [--kubeconfig FILE]

Runs gtrace's node agent, as the DaemonSet of deploy/ does on every node
of a Kubernetes cluster. It serves HTTPS on ADDR, with a certificate it
makes at its start (the API server's pod proxy does not check it):

    POST /v1/run    run a script on this node until its deadline, its
                    exit() or the caller's leaving, streaming its output
                    and then its maps as lines of JSON
    POST /v1/stop   end a run, as its exit() would: its maps still come
    GET  /readyz    "ok", without a token, for the kubelet
    GET  /metrics   the maps of the standing scripts (--scripts), as
                    gtrace serve --metrics exposes them, without a token,
                    for Prometheus

Every /v1 request needs a Kubernetes bearer token (in Authorization, or
in X-Gtrace-Authorization through the API server's pod proxy) whose user
holds the verb "trace" on the resource "nodes" of the API group
"gtrace.io" named NAME, and "trace-unsafe" for unsafe builtins.
docs/kubernetes.md describes the API; kubectl gtrace is its client.

OPTIONS:
    --listen ADDR      the address to listen on, such as :9741
    --node NAME        the name of this node in the cluster
    --scripts DIR      run the *.bt files of DIR from the start, joined
                       into one program in the order of their names; no
                       two may use a map of the same name
    --kubeconfig FILE  the API server and credentials to check tokens
                       with; by default the pod's service account
`

// agentCmd runs `gtrace agent`.
func agentCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "", "")
	node := fs.String("node", "", "")
	kubeconfig := fs.String("kubeconfig", "", "")
	scripts := fs.String("scripts", "", "")
	operands, err := parseMixed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, agentUsage)
		return 0
	}
	switch {
	case err != nil:
	case len(operands) > 0:
		err = fmt.Errorf("unexpected argument %q", operands[0])
	case *listen == "":
		err = errors.New("--listen is needed")
	case *node == "":
		err = errors.New("--node is needed")
	}
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n\n%s", err, agentUsage)
		return 1
	}
	if err := runAgent(*listen, *node, *kubeconfig, *scripts, stderr); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

func runAgent(addr, node, kubeconfig, scripts string, stderr io.Writer) error {
	if err := runtime.CheckPrivileges(); err != nil {
		return err
	}
	var standing string
	if scripts != "" {
		var err error
		if standing, err = standingScripts(scripts); err != nil {
			return err
		}
	}
	cfg, err := agentKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	client, err := kube.New(cfg)
	if err != nil {
		return err
	}
	srv := &agent.Server{
		Auth: &agent.Authorizer{Kube: client, Node: node},
		Run:  runForAgent,
	}
	// /metrics is routed before the standing program has compiled.
	exposition := &standingMetrics{}
	if standing != "" {
		srv.Metrics = exposition
	}
	tlsConfig, err := agent.SelfSignedTLS(node)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	l = tls.NewListener(l, tlsConfig)
	httpServer := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	standingDone := make(chan error, 1)
	if standing != "" {
		go func() {
			err := runStanding(ctx, standing, exposition, stderr)
			if err != nil {
				stop() // the DaemonSet restarts the agent
			}
			standingDone <- err
		}()
	}
	go func() {
		<-ctx.Done()
		// Runs end with their callers' requests: their maps are lost,
		// but no probe stays attached.
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		httpServer.Shutdown(shutdown)
		httpServer.Close()
	}()
	fmt.Fprintf(stderr, "gtrace agent for node %s listening on https://%s\n", node, l.Addr())
	if err := httpServer.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if standing != "" {
		// The standing program detaches its probes before the agent
		// exits.
		return <-standingDone
	}
	return nil
}

func agentKubeConfig(kubeconfig string) (*kube.Config, error) {
	if kubeconfig != "" {
		return kube.LoadKubeconfig([]string{kubeconfig}, "")
	}
	return kube.InClusterConfig()
}

// runForAgent runs a request's script as gtrace runs one given with -e,
// its output on the request's stream, until ctx ends.
func runForAgent(ctx context.Context, req *agent.RunRequest, out *agent.Stream) int {
	o := &options{format: "text", program: req.Program, params: req.Args, unsafe: req.Unsafe,
		container: containerFlags{pod: req.PodUID, container: req.ContainerID}}
	o.serve = func(prog *compiler.Program, ropts *runtime.Options) error {
		ropts.Printer = out.Printer()
		ropts.Flush = nil
		ropts.Wait = func() { <-ctx.Done() }
		return nil
	}
	err := trace(o, out.Stdout, out.Stderr)
	if ec, ok := err.(exitCode); ok {
		return int(ec)
	}
	if err != nil {
		fmt.Fprintf(out.Stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

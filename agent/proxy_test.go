package agent

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gtrace/internal/testutils"
	"gtrace/kube"
)

// podNetwork makes a network namespace joined to the host's by a veth
// pair with a /30 of its own, removed when t ends, and returns the
// namespace's name and the address inside it. The API server proxies
// only to addresses that are not loopback, as a pod's are.
func podNetwork(t *testing.T) (string, string) {
	t.Helper()
	testutils.RequireRoot(t)
	b := make([]byte, 2)
	rand.Read(b)
	name := fmt.Sprintf("gtk%02x%02x", b[0], b[1])
	host := fmt.Sprintf("10.213.%d.%d", b[0], b[1]&^3+1)
	pod := fmt.Sprintf("10.213.%d.%d", b[0], b[1]&^3+2)
	testutils.NetnsVeth(t, name, host, pod)
	return name, pod
}

// listenIn listens on addr in the network namespace netns: the socket
// stays there while this process serves it.
func listenIn(t *testing.T, netns, addr string) net.Listener {
	t.Helper()
	type result struct {
		l   net.Listener
		err error
	}
	done := make(chan result)
	go func() {
		// The thread switches namespace and back; if it cannot come back,
		// it stays locked and ends with this goroutine.
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- result{err: err}
			return
		}
		defer own.Close()
		target, err := os.Open("/run/netns/" + netns)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("enter %s: %w", netns, err)}
			return
		}
		l, listenErr := net.Listen("tcp", addr)
		if err := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); err != nil {
			if l != nil {
				l.Close()
			}
			done <- result{err: fmt.Errorf("leave %s: %w", netns, err)}
			return
		}
		runtime.UnlockOSThread()
		done <- result{l, listenErr}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	return r.l
}

// TestThroughPodProxy reaches an agent handler in a pod's network
// through the API server's pod proxy with kube.Client.Proxy, as
// kubectl gtrace does: the API server drops the Authorization header,
// so the caller's token travels in TokenHeader.
func TestThroughPodProxy(t *testing.T) {
	netns, podIP := podNetwork(t)
	s, tokens := setUp(t)
	auth := &Authorizer{Kube: agentClient(t, s, tokens["agent"]), Node: "node-1"}
	l := listenIn(t, netns, net.JoinHostPort(podIP, "0"))
	// /stream prints a line, then waits for the test to have read it
	// before it prints the next: the answer must stream through the
	// API server and the client.
	read := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/run", runHandler(auth))
	mux.Handle("/stream", auth.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-read:
			io.WriteString(w, "second\n")
		case <-r.Context().Done():
		}
	})))
	server := &http.Server{Handler: mux}
	go server.Serve(l)
	t.Cleanup(func() { server.Close() })
	_, port, _ := net.SplitHostPort(l.Addr().String())
	// The same API over TLS, with a certificate the API server does not
	// check.
	tlsServer := httptest.NewUnstartedServer(runHandler(auth))
	tlsServer.Listener.Close()
	tlsServer.Listener = listenIn(t, netns, net.JoinHostPort(podIP, "0"))
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	_, tlsPort, _ := net.SplitHostPort(tlsServer.Listener.Addr().String())

	// The pod that no kubelet runs gets its address by hand.
	s.Create(t, "/api/v1/namespaces/"+testNamespace+"/pods", &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-node-1"},
		Spec: corev1.PodSpec{
			NodeName:           "node-1",
			ServiceAccountName: "agent",
			Containers:         []corev1.Container{{Name: "agent", Image: "example.invalid/gtrace"}},
		},
	})
	var pod corev1.Pod
	path := "/api/v1/namespaces/" + testNamespace + "/pods/agent-node-1"
	if err := s.Do(http.MethodGet, path, nil, &pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = podIP
	pod.Status.PodIPs = []corev1.PodIP{{IP: podIP}}
	if err := s.Do(http.MethodPut, path+"/status", &pod, nil); err != nil {
		t.Fatal(err)
	}
	// The tracer may reach the agent's pods through the proxy.
	rbac(t, s, "test-gtrace-proxy", []any{rule("", "pods/proxy", nil, "get", "create")}, "tracer", "nobody")

	target := kube.PodPort{Namespace: testNamespace, Name: "agent-node-1"}
	fmt.Sscan(port, &target.Port)
	tlsTarget := kube.PodPort{Namespace: testNamespace, Name: "agent-node-1", HTTPS: true}
	fmt.Sscan(tlsPort, &tlsTarget.Port)
	tests := []struct {
		name   string
		target kube.PodPort
		caller string
		header string
		code   int
		body   string
	}{
		{"token in the agent's header", target, "tracer", TokenHeader, 200, "ran as system:serviceaccount:" + testNamespace + ":tracer"},
		{"over TLS", tlsTarget, "tracer", TokenHeader, 200, "ran as system:serviceaccount:" + testNamespace + ":tracer"},
		{"token only for the API server", target, "tracer", "", 401, "gtrace agent: no bearer token"},
		{"no right", target, "nobody", TokenHeader, 403, `may not trace on node "node-1"`},
		{"no right to the proxy", target, "unsafe", TokenHeader, 403, `cannot create resource "pods/proxy"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := agentClient(t, s, tokens[tt.caller])
			header := http.Header{}
			if tt.header != "" {
				header.Set(tt.header, "Bearer "+tokens[tt.caller])
			}
			resp, err := client.Proxy(context.Background(), tt.target, http.MethodPost, "/run", nil, header, strings.NewReader("script"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode/100 == 2 {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.code || string(body) != tt.body {
					t.Errorf("got %s: %s, want %d: %s", resp.Status, body, tt.code, tt.body)
				}
				return
			}
			err = kube.ResponseError(resp)
			var status *kube.StatusError
			if !errors.As(err, &status) || status.Code != tt.code || !strings.Contains(err.Error(), tt.body) {
				t.Errorf("got %v, want %d with %q", err, tt.code, tt.body)
			}
		})
	}

	t.Run("streamed", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		header := http.Header{TokenHeader: {"Bearer " + tokens["tracer"]}}
		resp, err := agentClient(t, s, tokens["tracer"]).Proxy(ctx, target, http.MethodGet, "/stream", nil, header, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		lines := bufio.NewReader(resp.Body)
		first, err := lines.ReadString('\n')
		if err != nil || first != "first\n" {
			t.Fatalf("first line %q, %v", first, err)
		}
		close(read)
		rest, err := io.ReadAll(lines)
		if err != nil || string(rest) != "second\n" {
			t.Errorf("the rest %q, %v", rest, err)
		}
	})

	missing := target
	missing.Name = "missing"
	resp, err := agentClient(t, s, s.AdminToken).Proxy(context.Background(), missing, http.MethodGet, "/run", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = kube.ResponseError(resp)
	if want := `pods "missing" not found (404 NotFound)`; err == nil || err.Error() != want {
		t.Errorf("proxy to a missing pod: %v, want %s", err, want)
	}
}

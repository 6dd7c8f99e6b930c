package kubeapi

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
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
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gtrace/internal/gobuild"
	"gtrace/internal/testnet"
	"gtrace/internal/testutils"
)

// Admin is the user name of Server.AdminToken, in group system:masters.
const Admin = "gtrace-test-admin"

// startTimeout bounds how long etcd and kube-apiserver may take to
// become ready.
const startTimeout = 2 * time.Minute

// Server is a running etcd and kube-apiserver, stopped when the test
// that started it ends.
type Server struct {
	// URL is the API server's address, https://127.0.0.1:PORT.
	URL string
	// AdminToken authenticates as Admin, who may do anything.
	AdminToken string
	// CAFile holds the certificates that the API server's serving
	// certificate chains to (it makes them itself, in its --cert-dir).
	CAFile string
	// CAData and CA hold the same certificates, in PEM and parsed.
	CAData []byte
	CA     *x509.CertPool
	// Kubectl is the path of kubectl, of the same Version.
	Kubectl string

	// client sends Do's requests.
	client *http.Client
}

// Start runs etcd and kube-apiserver on loopback, waits until the API
// server is ready, and stops both when t ends. It skips (fails under
// CI=true) without Debian's etcd-server, or without the binaries and
// the time to build them.
func Start(t *testing.T) *Server {
	t.Helper()
	etcdPath, err := exec.LookPath("etcd")
	if err != nil {
		testutils.Skip(t, "etcd is not installed (Debian: etcd-server)")
	}
	bin := binaries(t)
	started := time.Now()
	dir := t.TempDir()
	s := &Server{
		AdminToken: randomHex(t),
		Kubectl:    filepath.Join(bin, "kubectl"),
	}

	etcdURL := "http://" + testnet.FreeAddr(t)
	peerURL := "http://" + testnet.FreeAddr(t)
	etcdExited := start(t, dir, "etcd", etcdPath,
		"--name=gtrace-test",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=gtrace-test="+peerURL,
	)
	waitHTTP(t, dir, "etcd", etcdExited, http.DefaultClient, etcdURL+"/health", "")

	saKey, saPub := serviceAccountKeys(t, dir)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, fmt.Appendf(nil, "%s,%s,%s,\"system:masters\"\n", s.AdminToken, Admin, Admin), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testnet.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	s.URL = "https://" + addr
	certDir := filepath.Join(dir, "certs")
	apiExited := start(t, dir, "kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The service "kubernetes" may not point to loopback.
		"--endpoint-reconciler-type=none",
		"--secure-port="+port,
		"--cert-dir="+certDir,
		"--authorization-mode=RBAC",
		"--token-auth-file="+tokens,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+saPub,
		"--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/24",
		// The agent's DaemonSet runs privileged.
		"--allow-privileged=true",
	)
	// The serving certificate is made at start: until it exists, only
	// an unverified connection can ask whether the server is ready.
	insecure := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	waitHTTP(t, dir, "kube-apiserver", apiExited, &http.Client{Transport: insecure}, s.URL+"/readyz", s.AdminToken)
	insecure.CloseIdleConnections()
	s.CAFile = filepath.Join(certDir, "apiserver.crt")
	s.CAData, err = os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatalf("read the API server's certificate: %v", err)
	}
	s.CA = x509.NewCertPool()
	if !s.CA.AppendCertsFromPEM(s.CAData) {
		t.Fatalf("no certificate in %s", s.CAFile)
	}
	transport := &http.Transport{TLSClientConfig: s.TLSConfig()}
	s.client = &http.Client{Transport: transport}
	t.Cleanup(transport.CloseIdleConnections)
	t.Logf("etcd and kube-apiserver %s ready in %s", Version, time.Since(started).Round(time.Millisecond))
	return s
}

// binaries returns the directory of kube-apiserver and kubectl, building
// them if they are missing and t has time for it.
func binaries(t *testing.T) string {
	t.Helper()
	if Cached() {
		dir, _ := CacheDir()
		return dir
	}
	return gobuild.ForTest(t, fmt.Sprintf("kube-apiserver and kubectl %s", Version), "./internal/kubeapi/build", BuildBudget, Build)
}

// start runs name's binary with args, its output in DIR/NAME.log, and
// stops it when t ends, printing the log's end if t failed. The channel
// it returns is closed when the process exits.
func start(t testing.TB, dir, name, path string, args ...string) <-chan struct{} {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Registered first, these run after StartProcess' stop.
	t.Cleanup(func() {
		log.Close()
		if t.Failed() {
			t.Logf("end of %s's log:\n%s", name, logTail(logPath))
		}
	})
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// A test binary that dies takes the servers with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return testutils.StartProcess(t, cmd, 10*time.Second)
}

// waitHTTP polls url, with token as bearer token if set, until it
// answers 200, and fails t with the end of name's log if it does not
// within startTimeout, or if name exits.
func waitHTTP(t testing.TB, dir, name string, exited <-chan struct{}, client *http.Client, url, token string) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("%s exited before it was ready; end of its log:\n%s", name, logTail(filepath.Join(dir, name+".log")))
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%s: %s", resp.Status, body)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s is not ready after %s: %s\nend of its log:\n%s", name, startTimeout, last, logTail(filepath.Join(dir, name+".log")))
}

// logTail returns the last lines of the log at path.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

func randomHex(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// serviceAccountKeys writes the key pair that signs and checks service
// account tokens, and returns the private and public key files.
func serviceAccountKeys(t testing.TB, dir string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile, pubFile := filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: priv}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyFile, pubFile
}

// TLSConfig returns a TLS configuration that trusts the API server.
func (s *Server) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: s.CA}
}

// Do sends a request with body in, encoded as JSON unless it is nil, as
// the admin, and decodes the answer into out unless it is nil. An answer
// other than 2xx is an error with its body.
func (s *Server) Do(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return nil
}

// Create posts obj to path as the admin, failing t on error.
func (s *Server) Create(t testing.TB, path string, obj any) {
	t.Helper()
	if err := s.Do(http.MethodPost, path, obj, nil); err != nil {
		t.Fatal(err)
	}
}

// CreateNamespace creates the namespace name.
func (s *Server) CreateNamespace(t testing.TB, name string) {
	t.Helper()
	s.Create(t, "/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// CreateServiceAccount creates the service account namespace/name and
// returns a token for it from the TokenRequest API, valid for an hour.
func (s *Server) CreateServiceAccount(t testing.TB, namespace, name string) string {
	t.Helper()
	s.Create(t, "/api/v1/namespaces/"+namespace+"/serviceaccounts",
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return s.ServiceAccountToken(t, namespace, name)
}

// ServiceAccountToken returns a token for the service account
// namespace/name from the TokenRequest API, valid for an hour.
func (s *Server) ServiceAccountToken(t testing.TB, namespace, name string) string {
	t.Helper()
	hour := int64(3600)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}
	var answer authenticationv1.TokenRequest
	if err := s.Do(http.MethodPost, "/api/v1/namespaces/"+namespace+"/serviceaccounts/"+name+"/token", req, &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Status.Token == "" {
		t.Fatalf("no token for service account %s/%s", namespace, name)
	}
	return answer.Status.Token
}

// Kubeconfig writes a kubeconfig file that reaches the API server with
// token, and returns its path.
func (s *Server) Kubeconfig(t testing.TB, token string) string {
	t.Helper()
	config := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "test",
		"clusters": []any{map[string]any{
			"name":    "test",
			"cluster": map[string]any{"server": s.URL, "certificate-authority": s.CAFile},
		}},
		"users": []any{map[string]any{
			"name": "test",
			"user": map[string]any{"token": token},
		}},
		"contexts": []any{map[string]any{
			"name":    "test",
			"context": map[string]any{"cluster": "test", "user": "test", "namespace": "default"},
		}},
	}
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// RunKubectl runs kubectl with args against the API server, as the user
// of kubeconfig, and returns its combined output; a non-zero exit is an
// error with that output.
func (s *Server) RunKubectl(kubeconfig string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

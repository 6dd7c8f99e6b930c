package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Config is where the API server is and how to authenticate to it.
type Config struct {
	// Server is the API server's URL, such as https://10.0.0.1:6443.
	Server string
	// CAData holds the PEM certificates that the server's certificate
	// must chain to; empty trusts the system's roots.
	CAData []byte
	// Insecure skips verifying the server's certificate.
	Insecure bool
	// ServerName, if set, is the name the server's certificate is checked
	// against instead of the host of Server.
	ServerName string
	// Token is a bearer token; TokenFile, if set, names a file read again
	// for each request, as a pod's token is rotated in place.
	Token     string
	TokenFile string
	// CertData and KeyData are a PEM client certificate and its key.
	CertData []byte
	KeyData  []byte
	// Exec, if set, is a credential plugin that gives the token.
	Exec *ExecConfig
	// Namespace is the context's namespace, or the pod's own in a
	// cluster; "" if none is set.
	Namespace string
}

// ServiceAccountDir is where a pod finds its service account's token,
// the cluster's CA certificate and its own namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InClusterConfig returns the configuration of a process in a pod: the
// API server from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT,
// and the pod's service account from ServiceAccountDir.
func InClusterConfig() (*Config, error) {
	return inClusterConfig(ServiceAccountDir)
}

func inClusterConfig(dir string) (*Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set")
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read the cluster's CA certificate: %w", err)
	}
	tokenFile := filepath.Join(dir, "token")
	if _, err := os.Stat(tokenFile); err != nil {
		return nil, fmt.Errorf("find the service account token: %w", err)
	}
	namespace, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil {
		return nil, fmt.Errorf("read the pod's namespace: %w", err)
	}
	return &Config{
		Server:    "https://" + net.JoinHostPort(host, port),
		CAData:    ca,
		TokenFile: tokenFile,
		Namespace: strings.TrimSpace(string(namespace)),
	}, nil
}

// KubeconfigPaths returns the kubeconfig files that kubectl reads: those
// listed in KUBECONFIG, or ~/.kube/config.
func KubeconfigPaths() []string {
	if env := os.Getenv("KUBECONFIG"); env != "" {
		var paths []string
		for _, path := range filepath.SplitList(env) {
			if path != "" {
				paths = append(paths, path)
			}
		}
		return paths
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []string{filepath.Join(home, ".kube", "config")}
}

// kubeconfig is the part of a kubeconfig file that gtrace reads.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority"`
			CertificateAuthorityData []byte `json:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			TLSServerName            string `json:"tls-server-name"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token                 string          `json:"token"`
			TokenFile             string          `json:"tokenFile"`
			ClientCertificate     string          `json:"client-certificate"`
			ClientCertificateData []byte          `json:"client-certificate-data"`
			ClientKey             string          `json:"client-key"`
			ClientKeyData         []byte          `json:"client-key-data"`
			Exec                  *ExecConfig     `json:"exec"`
			AuthProvider          json.RawMessage `json:"auth-provider"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster   string `json:"cluster"`
			User      string `json:"user"`
			Namespace string `json:"namespace"`
		} `json:"context"`
	} `json:"contexts"`
}

// LoadKubeconfig reads the kubeconfig files at paths, merged as kubectl
// merges them (the first file to set a value, or name an entry, wins),
// and returns the configuration of the context named context, or of the
// current context if context is "". A missing file is skipped unless
// it is the only one. Of the credential plugins, exec plugins that give
// a token are supported; auth-provider plugins are not.
func LoadKubeconfig(paths []string, context string) (*Config, error) {
	var files []loadedKubeconfig
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) && len(paths) > 1 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read kubeconfig: %w", err)
		}
		var kc kubeconfig
		if err := yaml.Unmarshal(data, &kc); err != nil {
			return nil, fmt.Errorf("parse kubeconfig %s: %w", path, err)
		}
		files = append(files, loadedKubeconfig{path, kc})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no kubeconfig file in %s", strings.Join(paths, ", "))
	}

	if context == "" {
		for _, f := range files {
			if f.CurrentContext != "" {
				context = f.CurrentContext
				break
			}
		}
		if context == "" {
			return nil, errors.New("the kubeconfig sets no current context")
		}
	}
	var clusterName, userName, namespace string
	found := false
	for _, f := range files {
		for _, c := range f.Contexts {
			if c.Name == context && !found {
				clusterName, userName, namespace = c.Context.Cluster, c.Context.User, c.Context.Namespace
				found = true
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig: no context %q", context)
	}

	cfg := &Config{Namespace: namespace}
	found = false
	for _, f := range files {
		for _, c := range f.Clusters {
			if c.Name != clusterName || found {
				continue
			}
			found = true
			cl := c.Cluster
			cfg.Server, cfg.Insecure, cfg.ServerName = cl.Server, cl.InsecureSkipTLSVerify, cl.TLSServerName
			cfg.CAData = cl.CertificateAuthorityData
			if len(cfg.CAData) == 0 && cl.CertificateAuthority != "" {
				data, err := os.ReadFile(f.resolve(cl.CertificateAuthority))
				if err != nil {
					return nil, fmt.Errorf("kubeconfig cluster %q: read its CA certificate: %w", clusterName, err)
				}
				cfg.CAData = data
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig context %q: no cluster %q", context, clusterName)
	}
	if cfg.Server == "" {
		return nil, fmt.Errorf("kubeconfig cluster %q has no server", clusterName)
	}

	found = userName == ""
	for _, f := range files {
		for _, u := range f.Users {
			if u.Name != userName || found {
				continue
			}
			found = true
			user := u.User
			if len(user.AuthProvider) > 0 {
				return nil, fmt.Errorf("kubeconfig user %q: auth-provider plugins are not supported; use a token, a client certificate or an exec plugin", userName)
			}
			if user.Exec != nil {
				exec := *user.Exec
				// kubectl runs a command named by a relative path from the
				// kubeconfig's directory, and a bare name from PATH.
				if strings.Contains(exec.Command, "/") {
					exec.Command = f.resolve(exec.Command)
				}
				cfg.Exec = &exec
			}
			cfg.Token = user.Token
			if user.TokenFile != "" {
				cfg.TokenFile = f.resolve(user.TokenFile)
			}
			var err error
			if cfg.CertData, err = f.data(user.ClientCertificateData, user.ClientCertificate); err != nil {
				return nil, fmt.Errorf("kubeconfig user %q: read its client certificate: %w", userName, err)
			}
			if cfg.KeyData, err = f.data(user.ClientKeyData, user.ClientKey); err != nil {
				return nil, fmt.Errorf("kubeconfig user %q: read its client key: %w", userName, err)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig context %q: no user %q", context, userName)
	}
	return cfg, nil
}

// loadedKubeconfig is a kubeconfig file and where it was read from, to
// which the relative paths in it are relative.
type loadedKubeconfig struct {
	path string
	kubeconfig
}

func (f loadedKubeconfig) resolve(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(f.path), path)
}

// data returns inline if set, or else the contents of the file path if
// set.
func (f loadedKubeconfig) data(inline []byte, path string) ([]byte, error) {
	if len(inline) > 0 || path == "" {
		return inline, nil
	}
	return os.ReadFile(f.resolve(path))
}

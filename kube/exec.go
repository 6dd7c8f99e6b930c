package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ExecConfig is a kubeconfig user's credential plugin: a command that
// prints an ExecCredential with a token, as cloud providers' kubeconfigs
// use.
type ExecConfig struct {
	Command    string    `json:"command"`
	Args       []string  `json:"args"`
	Env        []ExecEnv `json:"env"`
	APIVersion string    `json:"apiVersion"`
}

// ExecEnv is an environment variable set for the plugin.
type ExecEnv struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// execToken runs a credential plugin and keeps its token until it
// expires.
type execToken struct {
	config ExecConfig

	mu      sync.Mutex
	token   string
	expires time.Time // zero: never
}

// get returns the plugin's token, running the plugin when there is none
// yet or it has expired.
func (e *execToken) get(ctx context.Context) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && (e.expires.IsZero() || time.Now().Before(e.expires)) {
		return e.token, nil
	}
	cmd := exec.CommandContext(ctx, e.config.Command, e.config.Args...)
	cmd.Env = os.Environ()
	for _, env := range e.config.Env {
		cmd.Env = append(cmd.Env, env.Name+"="+env.Value)
	}
	// The plugin learns what is asked, and that no one can answer a
	// prompt: gtrace reads the plugin's output itself.
	info, err := json.Marshal(map[string]any{
		"apiVersion": e.config.APIVersion,
		"kind":       "ExecCredential",
		"spec":       map[string]any{"interactive": false},
	})
	if err != nil {
		return "", err
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(info))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("credential plugin %s: %w: %s", e.config.Command, err, strings.TrimSpace(stderr.String()))
	}
	var cred struct {
		Kind   string `json:"kind"`
		Status struct {
			Token               string    `json:"token"`
			ExpirationTimestamp time.Time `json:"expirationTimestamp"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &cred); err != nil {
		return "", fmt.Errorf("credential plugin %s: read its ExecCredential: %w", e.config.Command, err)
	}
	if cred.Kind != "ExecCredential" {
		return "", fmt.Errorf("credential plugin %s printed a %q, not an ExecCredential", e.config.Command, cred.Kind)
	}
	if cred.Status.Token == "" {
		return "", errors.New("credential plugin " + e.config.Command + " gave no token (client certificates from plugins are not supported)")
	}
	e.token, e.expires = cred.Status.Token, cred.Status.ExpirationTimestamp
	return e.token, nil
}

package kubeprom

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gtrace/internal/gobuild"
)

// Version is the version of the Go module of Prometheus that Build
// compiles: v0.316.0 is Prometheus 3.16.0.
const Version = "v0.316.0"

// BuildBudget is the time a test must have left to build Prometheus
// itself.
const BuildBudget = 20 * time.Minute

// CacheDir is where Build puts the binary: the user's cache directory,
// under gtrace-prometheus/VERSION.
func CacheDir() (string, error) {
	return gobuild.CacheDir("gtrace-prometheus", Version)
}

// Path returns the path of the binary in CacheDir, and whether it is
// there.
func Path() (string, bool) {
	dir, err := CacheDir()
	if err != nil {
		return "", false
	}
	path := filepath.Join(dir, "prometheus")
	_, err = os.Stat(path)
	return path, err == nil
}

// Build makes the binary in CacheDir unless it is there, and returns its
// path. The go command's output goes to log. A lock file serializes
// concurrent builds, and the binary is renamed into place whole.
func Build(ctx context.Context, log io.Writer) (string, error) {
	dir, unlock, err := gobuild.LockCache("gtrace-prometheus", Version)
	if err != nil {
		return "", err
	}
	defer unlock()
	if path, ok := Path(); ok {
		return path, nil
	}
	bin, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(bin)
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "install", "-tags", "remove_all_sd,enable_kubernetes_sd",
		"github.com/prometheus/prometheus/cmd/prometheus@"+Version)
	cmd.Dir = bin
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off", "GOBIN="+bin)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build prometheus %s: %w", Version, err)
	}
	path := filepath.Join(dir, "prometheus")
	if err := os.Rename(filepath.Join(bin, "prometheus"), path); err != nil {
		return "", fmt.Errorf("install prometheus: %w", err)
	}
	fmt.Fprintf(log, "built prometheus %s in %s\n", Version, time.Since(start).Round(time.Second))
	return path, nil
}

// Binary returns the path of the binary, building it if it is missing
// and t has time for it, and skipping t otherwise.
func Binary(t *testing.T) string {
	t.Helper()
	if path, ok := Path(); ok {
		return path
	}
	return gobuild.ForTest(t, fmt.Sprintf("Prometheus %s with Kubernetes discovery", Version), "./internal/kubeprom/build", BuildBudget, Build)
}

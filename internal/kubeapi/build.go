package kubeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"gtrace/internal/gobuild"
)

// Version is the Kubernetes release whose kube-apiserver and kubectl the
// tests run.
const Version = "v1.37.2"

// BuildBudget is the time a test must have left to build the binaries
// itself. A cold build takes about 14 minutes of CPU: 40 minutes on a
// 2-core machine busy with other builds. From the go command's build
// cache it links in under a minute.
const BuildBudget = 30 * time.Minute

// Binaries are the commands Build makes.
var Binaries = []string{"kube-apiserver", "kubectl"}

// CacheDir is where Build puts the binaries of Version: the user's cache
// directory ($XDG_CACHE_HOME or ~/.cache), under gtrace-kube/VERSION.
func CacheDir() (string, error) {
	return gobuild.CacheDir("gtrace-kube", Version)
}

// Cached reports whether every binary is in CacheDir.
func Cached() bool {
	dir, err := CacheDir()
	if err != nil {
		return false
	}
	for _, name := range Binaries {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// Build makes the binaries of Version in CacheDir unless they are
// there, and returns the directory. The go command's progress goes to
// log. A lock file serializes builds by concurrent test binaries, and
// each binary is renamed into place whole.
func Build(ctx context.Context, log io.Writer) (string, error) {
	dir, unlock, err := gobuild.LockCache("gtrace-kube", Version)
	if err != nil {
		return "", err
	}
	defer unlock()
	if Cached() {
		return dir, nil
	}

	mod, err := os.MkdirTemp("", "gtrace-kube-build-")
	if err != nil {
		return "", fmt.Errorf("create the build module: %w", err)
	}
	defer os.RemoveAll(mod)
	gomod, err := buildModule(ctx, mod)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), gomod, 0o644); err != nil {
		return "", fmt.Errorf("write the build module: %w", err)
	}

	// The version flags make kube-apiserver and kubectl report Version,
	// as a release build does, rather than v0.0.0-master.
	major, minor, _ := strings.Cut(strings.TrimPrefix(Version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	ldflags := fmt.Sprintf("-X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s",
		Version, major, minor)
	for _, name := range Binaries {
		start := time.Now()
		tmp := filepath.Join(dir, "."+name+".tmp")
		cmd := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-trimpath", "-ldflags", ldflags, "-o", tmp, "k8s.io/kubernetes/cmd/"+name)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("build %s %s: %w", name, Version, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("install %s: %w", name, err)
		}
		fmt.Fprintf(log, "built %s %s in %s\n", name, Version, time.Since(start).Round(time.Second))
	}
	return dir, nil
}

// buildModule returns the go.mod of a module in dir that requires
// k8s.io/kubernetes at Version. Kubernetes' own go.mod replaces its
// staging modules by directories, which a dependency's replacements
// cannot do, so each is replaced here by the published module at the
// matching v0 version (v1.37.2 gives v0.37.2).
func buildModule(ctx context.Context, dir string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@"+Version)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("download k8s.io/kubernetes %s: %w", Version, err)
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("read go mod download's answer: %w", err)
	}
	f, err := os.Open(info.GoMod)
	if err != nil {
		return nil, fmt.Errorf("read the go.mod of k8s.io/kubernetes: %w", err)
	}
	defer f.Close()

	staging := "v0." + strings.TrimPrefix(Version, "v1.")
	var b strings.Builder
	fmt.Fprintf(&b, "module gtrace.test/kubebuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n", Version)
	replaced := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// A staging line reads "k8s.io/api => ./staging/src/k8s.io/api".
		path, target, ok := strings.Cut(strings.TrimSpace(sc.Text()), " => ")
		if !ok || !strings.HasPrefix(target, "./staging/") {
			continue
		}
		fmt.Fprintf(&b, "\t%s => %s %s\n", path, path, staging)
		replaced++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the go.mod of k8s.io/kubernetes: %w", err)
	}
	if replaced == 0 {
		return nil, fmt.Errorf("the go.mod of k8s.io/kubernetes %s replaces no staging module", Version)
	}
	b.WriteString(")\n")
	return []byte(b.String()), nil
}

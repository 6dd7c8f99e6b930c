package gobuild

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"gtrace/internal/testutils"
)

// CacheDir is where the binaries of name at version go: the user's
// cache directory ($XDG_CACHE_HOME or ~/.cache), under NAME/VERSION.
func CacheDir(name, version string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the cache directory: %w", err)
	}
	return filepath.Join(base, name, version), nil
}

// LockCache creates CacheDir(name, version) and takes an exclusive lock
// on its .lock file, which serializes builds by concurrent test
// binaries. It returns the directory; unlock releases the lock.
func LockCache(name, version string) (dir string, unlock func(), err error) {
	dir, err = CacheDir(name, version)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("create the cache directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, fmt.Errorf("open the build lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", nil, fmt.Errorf("take the build lock: %w", err)
	}
	return dir, func() { lock.Close() }, nil
}

// ForTest runs build for t and returns what it returns, what naming the
// commands it makes and ahead the go run argument that builds them
// before the tests. It skips t (fails it under CI=true) if t has less
// than budget left, or if the build outlasts t's timeout: a build cut
// short leaves the test a minute to say so.
func ForTest(t *testing.T, what, ahead string, budget time.Duration, build func(context.Context, io.Writer) (string, error)) string {
	t.Helper()
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		if time.Until(deadline) < budget {
			testutils.Skip(t, fmt.Sprintf("%s not built, and the test has less than %s left to build: build first with go run %s", what, budget, ahead))
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute))
		defer cancel()
	}
	t.Logf("building %s; go run %s does it ahead of the tests", what, ahead)
	var log bytes.Buffer
	path, err := build(ctx, &log)
	if ctx.Err() != nil {
		testutils.Skip(t, fmt.Sprintf("building %s took longer than the test's timeout: build first with go run %s", what, ahead))
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	return path
}

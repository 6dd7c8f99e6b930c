package gobuild

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockCache takes the lock of a cache directory under a temporary
// $XDG_CACHE_HOME: the directory and its lock file are made, and a
// second taker waits until the first releases it.
func TestLockCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, unlock, err := LockCache("gtrace-gobuild-test", "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "gtrace-gobuild-test", "v1.2.3"); dir != want {
		t.Errorf("LockCache's directory is %s, want %s", dir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err != nil {
		t.Errorf("no lock file: %v", err)
	}

	second := make(chan error, 1)
	go func() {
		_, unlock, err := LockCache("gtrace-gobuild-test", "v1.2.3")
		if err == nil {
			unlock()
		}
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("a second LockCache returned (%v) while the first held the lock", err)
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	if err := <-second; err != nil {
		t.Fatalf("the second LockCache: %v", err)
	}
}

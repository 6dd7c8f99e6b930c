package testutils

import (
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// StartProcess starts cmd and stops it when tb ends, even after a
// failure: SIGTERM, then SIGKILL if it has not exited within grace. The
// channel it returns is closed when the process exits.
func StartProcess(tb testing.TB, cmd *exec.Cmd, grace time.Duration) <-chan struct{} {
	tb.Helper()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(grace):
			cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// StartHeld starts cmd with a pipe to its standard input, which the
// test writes or closes to release it, and kills it when tb ends, even
// after a failure.
func StartHeld(tb testing.TB, cmd *exec.Cmd) (release io.WriteCloser) {
	tb.Helper()
	release, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return release
}

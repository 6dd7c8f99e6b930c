package testutils

import (
	"io"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// FreeAddr returns a loopback address with a port that was free a
// moment ago.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

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

package runtime

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// holdScript is what a -c child runs until tracing is set up: a shell
// stops itself, and once continued execs the command. The stop takes
// effect as kill returns, before the probes attach, so the one system
// call traced under cpid before the command's own is its execve. (A
// shell reading a pipe on another fd would restore its descriptors with
// dup2, fcntl and close after the read; a Go child would add its
// runtime's threads and timers to cpid.)
const holdScript = `kill -STOP $$ || exit 1; exec "$0" "$@"`

// Child is a -c command held back until every probe is attached.
type Child struct {
	Pid int
	cmd *exec.Cmd
}

// StartChild starts command, stopped before it execs.
func StartChild(command string) (*Child, error) {
	args := strings.Fields(command)
	if len(args) == 0 {
		return nil, fmt.Errorf("-c: empty command")
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("-c: %w", err)
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", holdScript, path}, args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The child must not outlive gtrace, even a killed one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("-c: %w", err)
	}
	return &Child{Pid: cmd.Process.Pid, cmd: cmd}, nil
}

// Release lets the child exec its command: it waits until the shell has
// stopped (or died), without reaping it, then continues it.
func (c *Child) Release() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.Pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	unix.Kill(c.Pid, unix.SIGCONT)
}

// Wait returns when the child has exited, and reaps it.
func (c *Child) Wait() { c.cmd.Wait() }

// Kill ends a child that has not been released or has not finished.
func (c *Child) Kill() {
	c.cmd.Process.Kill()
}

// WaitPid returns when process pid has exited.
func WaitPid(pid int) {
	// A pidfd becomes readable when the process ends, before its
	// parent reaps it; kill(pid, 0) would still find the zombie.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		for unix.Kill(pid, 0) == nil {
			time.Sleep(100 * time.Millisecond)
		}
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}

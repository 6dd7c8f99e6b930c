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
// waits for a line on fd 3, then execs the command. A small C program in
// a blocking read makes almost no syscalls of its own before the
// command's execve, which is traced, as bpftrace's forked child does; a
// Go child would add its runtime's threads and timers to cpid.
const holdScript = `read -r _ <&3 || exit 1; exec 3<&-; exec "$0" "$@"`

// Child is a -c command held back until every probe is attached.
type Child struct {
	Pid     int
	cmd     *exec.Cmd
	release *os.File
	done    chan struct{}
}

// StartChild starts command, paused before it execs.
func StartChild(command string) (*Child, error) {
	args := strings.Fields(command)
	if len(args) == 0 {
		return nil, fmt.Errorf("-c: empty command")
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("-c: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", holdScript, path}, args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r}
	// The child must not outlive gtrace, even a killed one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("-c: %w", err)
	}
	r.Close()
	c := &Child{Pid: cmd.Process.Pid, cmd: cmd, release: w, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Release lets the child exec its command.
func (c *Child) Release() {
	c.release.Write([]byte{'\n'})
	c.release.Close()
}

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Kill ends a child that has not been released or has not finished.
func (c *Child) Kill() {
	c.release.Close()
	c.cmd.Process.Kill()
}

// WatchPid returns a channel closed when process pid has exited.
func WatchPid(pid int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
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
	}()
	return done
}

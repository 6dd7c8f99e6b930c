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

// childEnv marks a gtrace process started to become the -c command: it
// waits until tracing is set up, then execs the command. Starting the
// child first gives cpid its value before the programs are compiled.
const childEnv = "GTRACE_CHILD_EXEC"

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
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = append(os.Environ(), childEnv+"="+path)
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
	c.release.Write([]byte{1})
	c.release.Close()
}

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Kill ends a child that has not been released or has not finished.
func (c *Child) Kill() {
	c.release.Close()
	c.cmd.Process.Kill()
}

// ExecChildIfAsked turns this process into the -c command when it was
// started by StartChild; otherwise it returns at once.
func ExecChildIfAsked() {
	path := os.Getenv(childEnv)
	if path == "" {
		return
	}
	os.Unsetenv(childEnv)
	release := os.NewFile(3, "release")
	var b [1]byte
	if n, _ := release.Read(b[:]); n != 1 {
		os.Exit(1) // tracing never started
	}
	release.Close()
	err := unix.Exec(path, os.Args, os.Environ())
	fmt.Fprintf(os.Stderr, "exec %s: %v\n", path, err)
	os.Exit(127)
}

// WatchPid returns a channel closed when process pid has exited.
func WatchPid(pid int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for unix.Kill(pid, 0) == nil {
			time.Sleep(100 * time.Millisecond)
		}
		close(done)
	}()
	return done
}

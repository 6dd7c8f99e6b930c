package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// proc is a child started in a session of its own, so that its whole
// process group can be signalled, with its stdout and stderr in one pipe.
type proc struct {
	cmd    *exec.Cmd
	lines  chan string   // the output, line by line; closed at EOF
	exited chan struct{} // closed once the child is reaped
	state  *os.ProcessState
	reaper sync.Once
	mu     sync.Mutex
	out    strings.Builder // everything read, for collect
}

// startProc starts argv in dir. env nil means the runner's environment.
func startProc(argv []string, dir string, env []string) (*proc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1024), exited: make(chan struct{})}
	live.add(cmd.Process.Pid)
	go p.read(r)
	return p, nil
}

// groups are the process groups started and not yet killed, for
// killAll.
type groups struct {
	mu   sync.Mutex
	pids map[int]bool
}

var live = groups{pids: map[int]bool{}}

func (g *groups) add(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pids[pid] = true
}

func (g *groups) remove(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pids, pid)
}

// killAll kills every group still live: the command itself is ending.
func (g *groups) killAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for pid := range g.pids {
		unix.Kill(-pid, syscall.SIGKILL)
	}
}

// read sends the output line by line; a last line may lack its newline.
func (p *proc) read(r io.ReadCloser) {
	defer r.Close()
	defer close(p.lines)
	br := bufio.NewReader(r)
	for {
		l, err := br.ReadString('\n')
		if l != "" {
			p.mu.Lock()
			p.out.WriteString(l)
			p.mu.Unlock()
			p.lines <- l
		}
		if err != nil {
			return
		}
	}
}

// reap waits for the child in the background; until then it stays a
// zombie whose name can still be read, as the engine expects of BEFOREs.
func (p *proc) reap() {
	p.reaper.Do(func() {
		go func() {
			p.cmd.Wait()
			p.state = p.cmd.ProcessState
			close(p.exited)
		}()
	})
}

// signalGroup signals the child's whole process group.
func (p *proc) signalGroup(sig syscall.Signal) {
	unix.Kill(-p.cmd.Process.Pid, sig)
	if sig == syscall.SIGKILL {
		live.remove(p.cmd.Process.Pid)
	}
}

// finish gives the child grace to exit and close its output, then kills
// its process group, whatever is left of it, and returns all it printed.
func (p *proc) finish(grace time.Duration) string {
	p.reap()
	deadline := time.After(grace)
	select {
	case <-p.exited:
	case <-deadline:
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.exited
	p.drain(time.Second)
	return p.output()
}

// drain waits for the end of the output, for at most d: a grandchild in
// another group may hold the pipe open.
func (p *proc) drain(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case _, ok := <-p.lines:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// exitCode is the child's exit status as Python's subprocess gives it:
// minus the signal for a child killed by one.
func exitCode(s *os.ProcessState) int {
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return s.ExitCode()
}

// shell runs a SETUP, CLEANUP or REQUIRES command through /bin/sh in dir,
// bounded by limit, and returns its output and whether it succeeded.
func shell(command, dir string, limit time.Duration) (string, bool) {
	p, err := startProc([]string{"/bin/sh", "-c", command}, dir, nil)
	if err != nil {
		return err.Error(), false
	}
	p.reap()
	select {
	case <-p.exited:
	case <-time.After(limit):
		p.signalGroup(syscall.SIGKILL)
		<-p.exited
		p.drain(time.Second)
		return p.output() + "(timed out)", false
	}
	p.signalGroup(syscall.SIGKILL)
	p.drain(time.Second)
	return p.output(), p.state.Success()
}

// commName reads the name the kernel keeps for pid, as ps shows it.
func commName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// childPids lists the children of pid.
func childPids(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		var n int
		fmt.Sscan(f, &n)
		pids = append(pids, n)
	}
	return pids
}

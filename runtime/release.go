package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// gtrace never closes a link itself. Closing the last reference to a
// uprobe's link unregisters the uprobe, which writes the original
// instruction back into every process mapping the file, through
// get_user_pages. That returns EINTR to a thread with a fatal signal
// pending, and the kernel then gives up the uprobe ("failed to
// unregister, leaking uprobe"): its int3 stays in the traced processes
// and its USDT semaphores stay raised until reboot. A thread has a fatal
// signal pending exactly when gtrace is killed, or exits at once on a
// second Ctrl-C, while a close is in flight. A process that exits (by
// exit or by a signal) closes its files with no signal pending, so the
// kernel's release at exit never leaves a probe behind.
//
// So tracing stops by a flag that every program checks first (raised
// by stopProbes), and the links are released by a process's exit: a
// releaser, a copy of gtrace in a session of its own (out of reach of
// the terminal's Ctrl-C), takes the links over at the end through a
// socket, waits for gtrace to exit, then exits too. Detaching, which
// takes seconds for many uprobes or tracepoints, happens in the
// releaser's exit while the user already has the prompt back. The
// releaser starts before the probes attach, so that what its start
// does (a Go program's reads and mappings) is never traced.

// releaseEnv marks a releaser. Its fd 3 is a socket to gtrace, on which
// it says it is ready and then receives the links; fd 4 a pidfd of
// gtrace.
const releaseEnv = "GTRACE_RELEASE_LINKS"

// releaserName is the releaser's command name, as ps shows it.
const releaserName = "gtrace-release"

// Messages on the socket: each carries links but the last.
const (
	msgReady byte = iota // releaser to gtrace: started; and: holds every link
	msgLinks             // gtrace to releaser: links follow
	msgLast              // gtrace to releaser: that was all
)

// maxRights is how many descriptors one message carries (the kernel
// takes at most 253).
const maxRights = 250

func init() {
	// Any binary that links the runtime, gtrace or a test, can be a
	// releaser: it re-executes itself.
	if os.Getenv(releaseEnv) == "" {
		return
	}
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(releaserName+"\x00"))), 0, 0, 0) // only the name ps shows
	const conn, pidfd = 3, 4
	unix.Write(conn, []byte{msgReady})
	msg, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*maxRights))
	for {
		// The descriptors received stay open, unused, until the exit.
		n, _, _, _, err := unix.Recvmsg(conn, msg, oob, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 || msg[0] == msgLast {
			break // gtrace is done with the socket, or gone
		}
	}
	unix.Write(conn, []byte{msgReady})
	fds := []unix.PollFd{{Fd: pidfd, Events: unix.POLLIN}}
	for {
		// The pidfd reads ready once gtrace has exited, after it
		// closed its own references.
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			break
		}
	}
	os.Exit(0)
}

// releaser is gtrace's end of a releaser process.
type releaser struct {
	mu   sync.Mutex
	conn *os.File // nil once the links are handed over
}

// startReleaser starts a releaser and waits until it is ready.
func startReleaser() (*releaser, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	conn, theirs := os.NewFile(uintptr(pair[0]), "releaser"), os.NewFile(uintptr(pair[1]), "releaser")
	defer theirs.Close()
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	self := os.NewFile(uintptr(pidfd), "pidfd")
	defer self.Close()
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{releaserName},
		Env:         []string{releaseEnv + "=1"},
		ExtraFiles:  []*os.File{theirs, self},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	// gtrace's exit reparents it to init, which reaps it.
	cmd.Process.Release()
	if err := expectReady(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return &releaser{conn: conn}, nil
}

// expectReady reads the releaser's ready message.
func expectReady(conn *os.File) error {
	b := make([]byte, 1)
	if n, err := conn.Read(b); err != nil || n != 1 || b[0] != msgReady {
		return fmt.Errorf("no word from it (%v)", err)
	}
	return nil
}

// handOver sends links to the releaser, once, and returns when it holds
// them: they stay attached until this process and then the releaser
// have exited. Without a releaser, or if it is gone, the links are
// released by this process's own exit, which is as safe, only slower.
func (rl *releaser) handOver(links []link.Link) error {
	if rl == nil {
		return nil
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.conn == nil {
		return nil
	}
	defer func() {
		rl.conn.Close()
		rl.conn = nil
	}()
	var fds []int
	for _, l := range links {
		f, ok := l.(interface{ FD() int })
		if !ok {
			return fmt.Errorf("link %T has no file descriptor", l)
		}
		fds = append(fds, f.FD())
	}
	sock := int(rl.conn.Fd())
	for len(fds) > 0 {
		n := min(len(fds), maxRights)
		if err := unix.Sendmsg(sock, []byte{msgLinks}, unix.UnixRights(fds[:n]...), nil, 0); err != nil {
			return fmt.Errorf("send links: %w", err)
		}
		fds = fds[n:]
	}
	if err := unix.Sendmsg(sock, []byte{msgLast}, nil, nil, 0); err != nil {
		return fmt.Errorf("send links: %w", err)
	}
	return expectReady(rl.conn)
}

// rcuWaiter waits for every BPF program running now to return. After an
// update of a map-in-map, the kernel waits for an RCU grace period
// before it returns to user space, so that no program still uses the
// old inner map; gtrace's programs are not sleepable, so each run is
// inside one RCU read-side section.
type rcuWaiter struct {
	outer, inner *ebpf.Map
}

func newRCUWaiter() (*rcuWaiter, error) {
	inner := &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
	outer, err := ebpf.NewMap(&ebpf.MapSpec{Name: "rcu_wait", Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4,
		MaxEntries: 1, InnerMap: inner})
	if err != nil {
		return nil, fmt.Errorf("create the map-in-map that waits for programs: %w", err)
	}
	in, err := ebpf.NewMap(inner)
	if err != nil {
		outer.Close()
		return nil, fmt.Errorf("create the map-in-map that waits for programs: %w", err)
	}
	return &rcuWaiter{outer: outer, inner: in}, nil
}

func (w *rcuWaiter) wait() error {
	return w.outer.Put(uint32(0), w.inner)
}

func (w *rcuWaiter) Close() error {
	return errors.Join(w.outer.Close(), w.inner.Close())
}

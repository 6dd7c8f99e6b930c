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
// by stopProbes), and the links are released by a process's exit: at
// the end gtrace hands them to a releaser, a copy of itself in a
// session of its own (out of reach of the terminal's Ctrl-C), which
// waits for gtrace to exit and then exits too. Detaching, which takes
// seconds for many uprobes or tracepoints, happens in the releaser's
// exit while the user already has the prompt back.

// releaseEnv marks a releaser. Its fd 3 is a pidfd of the process that
// handed over its links, fds 4 and up are the links.
const releaseEnv = "GTRACE_RELEASE_LINKS"

// releaserName is the releaser's command name, as ps shows it.
const releaserName = "gtrace-release"

func init() {
	// Any binary that links the runtime, gtrace or a test, can be a
	// releaser: it re-executes itself.
	if os.Getenv(releaseEnv) == "" {
		return
	}
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(releaserName+"\x00"))), 0, 0, 0) // only the name ps shows
	fds := []unix.PollFd{{Fd: 3, Events: unix.POLLIN}}
	for {
		// The pidfd reads ready once the process has exited, after it
		// closed its own references.
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			break
		}
	}
	os.Exit(0)
}

// releaser hands links over to a releaser process, once: on a second
// signal and at the end of the run, whichever comes first.
type releaser struct {
	mu   sync.Mutex
	done bool
}

// handOver starts a releaser holding links and returns at once: the
// links stay attached until this process and then the releaser have
// exited. Without a releaser (no pidfd before Linux 5.3, or the
// executable cannot be run again), the links are released by this
// process's own exit, which is as safe, only slower.
func (rl *releaser) handOver(links []link.Link) error {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.done || len(links) == 0 {
		return nil
	}
	rl.done = true
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	files := []*os.File{os.NewFile(uintptr(pidfd), "pidfd")}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, l := range links {
		fd, err := linkFD(l)
		if err != nil {
			return err
		}
		files = append(files, fd)
	}
	cmd := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{releaserName},
		Env:         []string{releaseEnv + "=1"},
		ExtraFiles:  files,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start a releaser: %w", err)
	}
	// Its parent's exit reparents it to init, which reaps it.
	return cmd.Process.Release()
}

// linkFD returns a duplicate of a link's file descriptor: the link's
// own, or for a link made by the perf event ioctl (kernels before 5.15),
// the perf event's.
func linkFD(l link.Link) (*os.File, error) {
	var fd int
	switch l := l.(type) {
	case interface{ FD() int }:
		fd = l.FD()
	case link.PerfEvent:
		return l.PerfEvent()
	default:
		return nil, fmt.Errorf("link %T has no file descriptor", l)
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("dup link: %w", err)
	}
	return os.NewFile(uintptr(dup), "link"), nil
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

package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"gtrace/probe"
)

// No thread of gtrace closes a link, or attaches a uprobe. Closing the
// last reference to a uprobe's link unregisters the uprobe, which writes
// the original instruction back into every process that maps the file,
// through get_user_pages; attaching one writes its int3 the same way, and
// undoes that if it fails. get_user_pages returns EINTR to a thread with
// a fatal signal pending, and the kernel then gives the uprobe up
// ("failed to unregister, leaking uprobe"): its int3 stays in the traced
// processes and its USDT semaphores stay raised until reboot. A thread of
// gtrace has a fatal signal pending exactly when gtrace is killed, or
// exits at once on a second Ctrl-C, while such a call is in flight. A
// process that exits closes its files with no signal pending, so the
// kernel's release at exit never leaves a probe behind.
//
// So a keeper, a copy of gtrace in a session of its own (out of reach of
// the terminal's Ctrl-C and of signals sent to gtrace), attaches the
// user-space probes and holds every link: gtrace sends it the links it
// attaches itself as soon as they exist. The keeper waits for gtrace to
// exit, then for its own attaches in flight, and exits: the kernel
// releases the links in that exit. Tracing stops earlier, by a flag that
// every program checks first (stopProbes). Detaching, which takes
// seconds for tens of uprobes or tracepoints, happens after gtrace has
// exited, and gtrace exits at once however it is stopped. The keeper
// starts before the probes attach, so that what its start does (a Go
// program's reads and mappings) is never traced.

// keeperEnv marks a keeper. Its fd 3 is a socket to gtrace, fd 4 a pidfd
// of gtrace.
const keeperEnv = "GTRACE_KEEPER"

// keeperName is the keeper's command name, as ps shows it.
const keeperName = "gtrace-keeper"

// Messages on the socket, a byte of type and a JSON body.
const (
	msgReady    byte = iota // keeper: started
	msgLinks                // gtrace: keep the links that come with this
	msgAttach               // gtrace: attach attachRequest, whose program comes with this
	msgAttached             // keeper: attachReply
)

// maxRights is how many descriptors one message carries (the kernel
// takes at most 253).
const maxRights = 250

type attachRequest struct {
	ID    int
	Probe probe.Probe
	Pid   int
}

type attachReply struct {
	ID  int
	Err string
}

func init() {
	// Any binary that links the runtime, gtrace or a test, can be a
	// keeper: it re-executes itself.
	if os.Getenv(keeperEnv) == "" {
		return
	}
	keep(3, 4)
	os.Exit(0)
}

// keep is a keeper's life.
func keep(conn, pidfd int) {
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(unsafe.StringData(keeperName+"\x00"))), 0, 0, 0) // only the name ps shows
	var replies sync.Mutex
	reply := func(r attachReply) {
		b, _ := json.Marshal(r)
		replies.Lock()
		unix.Write(conn, append([]byte{msgAttached}, b...))
		replies.Unlock()
	}
	var kept sync.Mutex
	var links []link.Link // kept until the exit, never closed
	var attaching sync.WaitGroup
	slots := make(chan struct{}, goruntime.NumCPU())
	unix.Write(conn, []byte{msgReady})
	buf, oob := make([]byte, 1<<16), make([]byte, unix.CmsgSpace(4*maxRights))
	for {
		n, oobn, _, _, err := unix.Recvmsg(conn, buf, oob, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break // gtrace has exited
		}
		var fds []int
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				if rights, err := unix.ParseUnixRights(&m); err == nil {
					fds = append(fds, rights...)
				}
			}
		}
		if buf[0] != msgAttach {
			continue // links: their descriptors stay open
		}
		var req attachRequest
		if err := json.Unmarshal(buf[1:n], &req); err != nil || len(fds) != 1 {
			reply(attachReply{ID: req.ID, Err: fmt.Sprintf("attach request with %d descriptors: %v", len(fds), err)})
			continue
		}
		attaching.Add(1)
		slots <- struct{}{}
		go func() {
			defer attaching.Done()
			defer func() { <-slots }()
			prog, err := ebpf.NewProgramFromFD(fds[0])
			if err != nil {
				reply(attachReply{ID: req.ID, Err: fmt.Sprintf("attach %s: program: %v", req.Probe.Name, err)})
				return
			}
			l, err := probe.Attach(&req.Probe, prog, req.Pid)
			prog.Close() // its links hold it
			kept.Lock()
			links = append(links, l...)
			kept.Unlock()
			r := attachReply{ID: req.ID}
			if err != nil {
				r.Err = errors.Unwrap(err).Error() // the cause, of an *probe.AttachError
			}
			reply(r)
		}()
	}
	// Exiting now would kill attaches in flight: the very case this
	// process is for.
	attaching.Wait()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		// The pidfd reads ready once gtrace has exited, after it
		// closed its own references.
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			break
		}
	}
	// The links are released by the kernel as this process exits; until
	// then no finalizer may close them.
	goruntime.KeepAlive(links)
}

// keeper is gtrace's end of a keeper process.
type keeper struct {
	conn *os.File
	send sync.Mutex
}

// startKeeper starts a keeper and waits until it is ready.
func startKeeper() (*keeper, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	conn, theirs := os.NewFile(uintptr(pair[0]), "keeper"), os.NewFile(uintptr(pair[1]), "keeper")
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
		Args:        []string{keeperName},
		Env:         []string{keeperEnv + "=1"},
		ExtraFiles:  []*os.File{theirs, self},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("start: %w", err)
	}
	// gtrace's exit reparents it to init, which reaps it.
	cmd.Process.Release()
	b := make([]byte, 1)
	if n, err := conn.Read(b); err != nil || n != 1 || b[0] != msgReady {
		conn.Close()
		return nil, fmt.Errorf("no word from it (%v)", err)
	}
	return &keeper{conn: conn}, nil
}

// sendmsg sends one message with descriptors.
func (k *keeper) sendmsg(typ byte, body []byte, fds []int) error {
	k.send.Lock()
	defer k.send.Unlock()
	var rights []byte
	if len(fds) > 0 {
		rights = unix.UnixRights(fds...)
	}
	return unix.Sendmsg(int(k.conn.Fd()), append([]byte{typ}, body...), rights, nil, 0)
}

// keep hands links over to the keeper, which holds them until it exits.
func (k *keeper) keep(links []link.Link) error {
	var fds []int
	for _, l := range links {
		f, ok := l.(interface{ FD() int })
		if !ok {
			return fmt.Errorf("link %T has no file descriptor", l)
		}
		fds = append(fds, f.FD())
	}
	for len(fds) > 0 {
		n := min(len(fds), maxRights)
		if err := k.sendmsg(msgLinks, nil, fds[:n]); err != nil {
			return fmt.Errorf("hand links over: %w", err)
		}
		fds = fds[n:]
	}
	return nil
}

// attach has the keeper attach probes, their programs in progs, and
// keep their links; it returns each one's error. It reads the keeper's
// replies itself, and reads nothing once they are in: a read while
// tracing would show in what gtrace's own probes see.
func (k *keeper) attach(probes []*probe.Probe, progs []*ebpf.Program, pid int) []error {
	errs := make([]error, len(probes))
	sent := 0
	for i, p := range probes {
		body, err := json.Marshal(attachRequest{ID: i, Probe: *p, Pid: pid})
		if err == nil {
			err = k.sendmsg(msgAttach, body, []int{progs[i].FD()})
		}
		if err != nil {
			errs[i] = fmt.Errorf("attach %s: %w", p.Name, err)
			continue
		}
		sent++
	}
	buf := make([]byte, 1<<16)
	for ; sent > 0; sent-- {
		n, err := k.conn.Read(buf)
		if err != nil || n == 0 {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = fmt.Errorf("attach %s: the process that attaches user-space probes has exited", probes[i].Name)
				}
			}
			break
		}
		var r attachReply
		if buf[0] != msgAttached || json.Unmarshal(buf[1:n], &r) != nil || r.ID < 0 || r.ID >= len(probes) {
			continue
		}
		if r.Err != "" {
			errs[r.ID] = &probe.AttachError{Probe: probes[r.ID].Name, Err: errors.New(r.Err)}
		}
	}
	return errs
}

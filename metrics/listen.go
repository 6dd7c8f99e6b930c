package metrics

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Listener is a listening TCP socket. Its socket and those of the
// connections it accepts are non-blocking files in the Go runtime's
// poller, so that reads, writes, deadlines and Close work as on a
// net.Conn, without the net package.
type Listener struct {
	file *os.File
	raw  syscall.RawConn
	addr netip.AddrPort
}

// Listen listens on a TCP address: IP:PORT, [IPv6]:PORT, localhost:PORT
// for 127.0.0.1, or :PORT for every IPv4 address. Port 0 picks a free
// port, which Addr tells. Host names other than localhost are refused:
// looking them up is the resolver's work.
func Listen(addr string) (*Listener, error) {
	ap, err := parseAddr(addr)
	if err != nil {
		return nil, err
	}
	family, sa := unix.AF_INET6, unix.Sockaddr(&unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()})
	if ap.Addr().Is4() {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if err := listen(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if bound, err := unix.Getsockname(fd); err == nil {
		switch bound := bound.(type) {
		case *unix.SockaddrInet4:
			ap = netip.AddrPortFrom(ap.Addr(), uint16(bound.Port))
		case *unix.SockaddrInet6:
			ap = netip.AddrPortFrom(ap.Addr(), uint16(bound.Port))
		}
	}
	file := os.NewFile(uintptr(fd), "metrics listener")
	raw, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, err
	}
	return &Listener{file: file, raw: raw, addr: ap}, nil
}

// listen binds fd to sa and listens on it, reusing a port that a
// previous gtrace left in TIME_WAIT.
func listen(fd int, sa unix.Sockaddr) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return err
	}
	if err := unix.Bind(fd, sa); err != nil {
		return err
	}
	return unix.Listen(fd, unix.SOMAXCONN)
}

// parseAddr reads --metrics' address.
func parseAddr(addr string) (netip.AddrPort, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return netip.AddrPort{}, fmt.Errorf("address %s: missing port in address", addr)
	}
	host, port := addr[:i], addr[i+1:]
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %s: port %q is not a number from 0 to 65535", addr, port)
	}
	var ip netip.Addr
	switch host {
	case "":
		ip = netip.IPv4Unspecified()
	case "localhost":
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	default:
		ip, err = netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
		if err != nil || ip.Zone() != "" {
			return netip.AddrPort{}, fmt.Errorf("address %s: %q is not an IP address (or localhost)", addr, host)
		}
		ip = ip.Unmap()
	}
	return netip.AddrPortFrom(ip, uint16(n)), nil
}

// Addr is the address the listener listens on, its port the one taken.
func (l *Listener) Addr() string { return l.addr.String() }

// Close stops listening; a waiting Accept returns an error.
func (l *Listener) Close() error { return l.file.Close() }

// Accept waits for a connection and returns it as a non-blocking file.
// A shortage of file descriptors or memory, or a connection that went
// away before it was accepted, does not end listening.
func (l *Listener) Accept() (*os.File, error) {
	for {
		var fd int
		var acceptErr error
		err := l.raw.Read(func(lfd uintptr) bool {
			fd, _, acceptErr = unix.Accept4(int(lfd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			return acceptErr != unix.EAGAIN
		})
		switch {
		case err != nil:
			return nil, err
		case acceptErr == nil:
			return os.NewFile(uintptr(fd), "metrics connection"), nil
		case errors.Is(acceptErr, unix.ECONNABORTED), errors.Is(acceptErr, unix.EINTR):
		case errors.Is(acceptErr, unix.EMFILE), errors.Is(acceptErr, unix.ENFILE),
			errors.Is(acceptErr, unix.ENOBUFS), errors.Is(acceptErr, unix.ENOMEM):
			time.Sleep(100 * time.Millisecond)
		default:
			return nil, fmt.Errorf("accept: %w", acceptErr)
		}
	}
}

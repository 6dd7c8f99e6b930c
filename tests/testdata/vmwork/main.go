// Command vmwork is the workload of tests/vm/vm_tools_test.go for what
// busybox cannot do deterministically in a vmtest guest. The test builds
// it with CGO_ENABLED=0, so that it runs in the guest's initramfs.
//
//	vmwork tcp PORT BYTES      listen on 127.0.0.1:PORT, connect to it, send
//	                           BYTES bytes from the client, read them on the
//	                           server, close the client, then the server
//	vmwork retrans PORT        listen on 127.0.0.1:PORT with a backlog of 0
//	                           and never accept: a first connection fills
//	                           the queue, so the SYN of a second one is
//	                           dropped and retransmitted once, after 1 s,
//	                           before the connect is given up at 2 s
//	vmwork unix MESSAGE        write MESSAGE into a Unix stream socket pair
//	                           and read it from the other end
//	vmwork alloc MB PASSES     map MB MiB of anonymous memory and write to
//	                           every page, PASSES times
//
// Each prints what it did on one line.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fail(fmt.Errorf("usage: vmwork tcp|retrans|unix|alloc ARGS"))
	}
	var err error
	switch os.Args[1] {
	case "tcp":
		err = tcp(os.Args[2], atoi(os.Args[3]))
	case "retrans":
		err = retrans(atoi(os.Args[2]))
	case "unix":
		err = unixPair(os.Args[2])
	case "alloc":
		err = alloc(atoi(os.Args[2]), atoi(os.Args[3]))
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "vmwork:", err)
	os.Exit(1)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return n
}

// tcp sends n bytes over a loopback connection and prints the client's
// local port.
func tcp(port string, n int) error {
	ln, err := net.Listen("tcp4", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	s, err := ln.Accept()
	if err != nil {
		return err
	}
	if _, err := c.Write(make([]byte, n)); err != nil {
		return err
	}
	got, err := io.ReadFull(s, make([]byte, n))
	if err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	// The server reads the client's FIN before it closes, so that both
	// ends close in order.
	if _, err := s.Read(make([]byte, 1)); err != io.EOF {
		return fmt.Errorf("server: want EOF, got %v", err)
	}
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Printf("tcp client port %d sent %d\n", c.LocalAddr().(*net.TCPAddr).Port, got)
	return nil
}

// retrans connects twice to a listener that accepts nothing, and prints
// how the second connection ended.
func retrans(port int) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return err
	}
	if err := unix.Listen(fd, 0); err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	first, err := net.Dial("tcp4", addr)
	if err != nil {
		return err
	}
	defer first.Close()
	second, err := net.DialTimeout("tcp4", addr, 2*time.Second)
	if err == nil {
		second.Close()
		return fmt.Errorf("the second connection was accepted")
	}
	fmt.Printf("retrans first port %d, second: timed out: %v\n",
		first.LocalAddr().(*net.TCPAddr).Port, os.IsTimeout(err))
	return nil
}

// unixPair sends msg through a Unix stream socket pair.
func unixPair(msg string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	if _, err := unix.Write(fds[0], []byte(msg)); err != nil {
		return err
	}
	buf := make([]byte, 256)
	n, err := unix.Read(fds[1], buf)
	if err != nil {
		return err
	}
	fmt.Printf("unix read %q\n", buf[:n])
	return nil
}

// alloc writes every page of mb MiB of anonymous memory, passes times.
func alloc(mb, passes int) error {
	mem, err := unix.Mmap(-1, 0, mb<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return err
	}
	for p := 1; p <= passes; p++ {
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = byte(p)
		}
	}
	fmt.Printf("alloc wrote %d MiB %d times\n", mb, passes)
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"gtrace/calltrace"
	"gtrace/webview"
)

const viewUsage = `USAGE:
    gtrace view --serve ADDR FILE

Serves FILE, a recording that gtrace class or gtrace flow saved with -o,
as a web page at ADDR (HOST:PORT; port 0 picks a free port) until Ctrl-C:
the objects or threads recorded, each one's timeline and call tree with
durations, and the struct's fields at each call.
`

// viewCmd runs `gtrace view`.
func viewCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("view", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("serve", "", "")
	operands, err := parseMixed(fs, args)
	if err == flag.ErrHelp {
		fmt.Fprint(stdout, viewUsage)
		return 0
	}
	if err != nil || len(operands) != 1 || *addr == "" {
		fmt.Fprintf(stderr, "ERROR: invalid arguments to view\n\n%s", viewUsage)
		return 1
	}
	return serveRecording(*addr, operands[0], stdout, stderr)
}

// serveRecording serves the recording in the file at path as a web page
// at addr until SIGINT or SIGTERM, and returns the exit code.
func serveRecording(addr, path string, stdout, stderr io.Writer) int {
	rec, err := readRecording(path)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "ERROR: --serve %s: %v\n", addr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stdout, "Serving %s at %s ; Ctrl-C to stop\n", path, pageURL(ln.Addr()))
	if err := webview.Serve(ctx, ln, rec); err != nil {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return 1
	}
	return 0
}

// readRecording reads a recording saved in the Chrome Trace Event format.
func readRecording(path string) (*calltrace.Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := calltrace.ReadChrome(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Any JSON object reads as a recording without calls; one that does
	// not even say what recorded it is some other file.
	if rec.Command == "" && len(rec.Tracks) == 0 {
		return nil, errors.New(path + ": not a recording of gtrace class or gtrace flow (no calls, no otherData.command)")
	}
	return rec, nil
}

// pageURL is the address of the page, with localhost for a listener on
// every address.
func pageURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String() + "/"
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
}

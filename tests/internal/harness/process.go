package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An Output is one of a command's two outputs.
type Output int

const (
	Stdout Output = iota
	Stderr
)

// waitLimit bounds the wait for an awaited line.
const waitLimit = time.Minute

// StartWait starts cmd and reads out, its stdout or stderr, line by line
// until ready accepts a line. Until then it calls poke, when not nil,
// every 10 ms, to make the line come. It returns the lines that follow,
// in a channel closed when out is closed by cmd and any children that
// share it. The caller reads them all, or passes them to Drain, lest cmd
// block writing.
//
// If out ends first, or a minute passes, StartWait kills cmd and fails
// tb with the lines read, and with cmd's other output if that is a
// *strings.Builder or another fmt.Stringer.
func StartWait(tb testing.TB, cmd *exec.Cmd, out Output, ready func(line string) bool, poke func()) <-chan string {
	tb.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	// With an *os.File as output, Wait does not wait for the pipe, which
	// a child of cmd may hold.
	other := cmd.Stderr
	if out == Stdout {
		cmd.Stdout = pw
	} else {
		other = cmd.Stdout
		cmd.Stderr = pw
	}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		tb.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	seen, err := await(lines, ready, poke)
	if err == nil {
		return lines
	}
	cmd.Process.Kill()
	cmd.Wait()
	go Drain(lines)
	msg := fmt.Sprintf("%s %q: %v; it printed:\n%s", cmd.Path, cmd.Args[1:], err, strings.Join(seen, "\n"))
	if s, ok := other.(fmt.Stringer); ok {
		msg += "\nand on its other output:\n" + s.String()
	}
	tb.Fatal(msg)
	return nil
}

// WaitLine reads lines until ready accepts one, and fails tb if they end
// first, or after a minute.
func WaitLine(tb testing.TB, lines <-chan string, ready func(line string) bool) {
	tb.Helper()
	if seen, err := await(lines, ready, nil); err != nil {
		tb.Fatalf("%v; the lines were:\n%s", err, strings.Join(seen, "\n"))
	}
}

// await reads lines until ready accepts one, calling poke every 10 ms
// until then. It returns the lines read before, and an error if the
// lines end or waitLimit passes first.
func await(lines <-chan string, ready func(string) bool, poke func()) ([]string, error) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(waitLimit)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return seen, errors.New("the output ended before the awaited line")
			}
			if ready(l) {
				return seen, nil
			}
			seen = append(seen, l)
		case <-tick.C:
			if poke != nil {
				poke()
			}
		case <-timeout:
			return seen, fmt.Errorf("the awaited line did not come within %v", waitLimit)
		}
	}
}

// Drain reads lines to their end.
func Drain(lines <-chan string) {
	for range lines {
	}
}

// StartTracing runs gtrace on script in the background until the test
// ends or stops it, and returns once every probe is attached: with -v,
// gtrace says so on stderr. Its output goes to stdout; the rest of
// stderr is dropped.
func StartTracing(tb testing.TB, script string, stdout io.Writer) *exec.Cmd {
	tb.Helper()
	tracer := exec.Command(bin, "-v", "-e", script)
	tracer.Stdout = stdout
	attached := func(l string) bool { return strings.HasPrefix(l, "attached ") }
	go Drain(StartWait(tb, tracer, Stderr, attached, nil))
	tb.Cleanup(func() {
		tracer.Process.Signal(syscall.SIGINT)
		tracer.Wait()
	})
	return tracer
}

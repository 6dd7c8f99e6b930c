package harness

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Links returns the ids of the kernel's BPF links.
func Links() (map[link.ID]bool, error) {
	// A link being created answers EAGAIN until it is settled.
	for try := 0; ; try++ {
		ids, err := listLinks()
		if err == nil {
			return ids, nil
		}
		if !errors.Is(err, syscall.EAGAIN) || try == 100 {
			return nil, fmt.Errorf("link ids: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func listLinks() (map[link.ID]bool, error) {
	ids := map[link.ID]bool{}
	var it link.Iterator
	defer it.Close()
	for it.Next() {
		ids[it.ID] = true
	}
	return ids, it.Err()
}

// LinkProgram returns the program of link id, or ok false if it is gone.
func LinkProgram(id link.ID) (ebpf.ProgramID, bool) {
	l, err := link.NewFromID(id)
	if err != nil {
		return 0, false
	}
	defer l.Close()
	info, err := l.Info()
	if err != nil {
		return 0, false
	}
	return info.Program, true
}

// WaitDetached waits until no link attaches program id: after gtrace
// exits, the kernel detaches its probes as its keeper exits.
func WaitDetached(tb testing.TB, id ebpf.ProgramID, within time.Duration) {
	tb.Helper()
	start := time.Now()
	for {
		links, err := Links()
		if err != nil {
			tb.Fatal(err)
		}
		attached := false
		for l := range links {
			if prog, ok := LinkProgram(l); ok && prog == id {
				attached = true
			}
		}
		if !attached {
			return
		}
		if time.Since(start) > within {
			tb.Fatalf("program %d is still attached %v after gtrace exited", id, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

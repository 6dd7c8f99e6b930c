package unwind

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"gtrace/symbol"
)

// TestProcessRows checks the rows of a running position-independent
// program: its functions' rows are moved to where it is loaded, and its
// libraries have rows too.
func TestProcessRows(t *testing.T) {
	bin := build(t, "-O2", "-fpie", "-pie", "-fomit-frame-pointer", "-DWAIT")
	fileRows, f := fileRows(t, bin)
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	var base uint64
	for deadline := time.Now().Add(5 * time.Second); base == 0 && time.Now().Before(deadline); {
		maps, err := symbol.ExecMappings(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range maps {
			if m.Path == bin {
				// The text segment of a gcc PIE maps file offset 0x1000
				// at vaddr 0x1000.
				base = m.Start - m.Offset
			}
		}
		if base == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if base == 0 {
		t.Fatalf("%s never mapped", bin)
	}
	rows, err := ProcessRows(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []string{"funcD", "realign"} {
		addr := symbolAddr(t, f, fn)
		want, _ := Lookup(fileRows, addr)
		got, ok := Lookup(rows, base+addr)
		if !ok || !got.same(want) || want.Kind == None {
			t.Errorf("%s at %#x: row %+v, %v; want %+v", fn, base+addr, got, ok, want)
		}
	}
	if len(rows) < 2*len(fileRows) {
		t.Errorf("%d rows for the process, %d for its program alone: no libraries'?", len(rows), len(fileRows))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Addr <= rows[i-1].Addr {
			t.Fatalf("rows %d and %d out of order: %+v, %+v", i-1, i, rows[i-1], rows[i])
		}
	}
	if _, err := ProcessRows(1 << 30); err == nil || !strings.Contains(err.Error(), "maps") {
		t.Errorf("ProcessRows of no process: %v", err)
	}
}

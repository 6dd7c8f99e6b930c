package reliability

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// detachFuncs is how many functions detachTarget has for uprobes, as
// many as libc's str* functions that first showed probes left behind.
const detachFuncs = 60

// detachTarget calls detachFuncs functions and fires a USDT probe with a
// semaphore in a loop, so that a tracer stopped at any moment has events
// in flight. It is the test's own binary: a probe left in it touches no
// other program on the machine.
func detachTarget() string {
	var b strings.Builder
	b.WriteString(`#define _SDT_HAS_SEMAPHORES 1
#include <unistd.h>
#include <sys/sdt.h>

__extension__ unsigned short gtest_tick_semaphore __attribute__((unused)) __attribute__((section(".probes")));
volatile long sink;
`)
	for i := range detachFuncs {
		fmt.Fprintf(&b, "__attribute__((noinline)) void g%d(long x) { sink += x + %d; }\n", i, i)
	}
	b.WriteString("int main(void) {\n\tfor (long i = 0;; i++) {\n")
	for i := range detachFuncs {
		fmt.Fprintf(&b, "\t\tg%d(i);\n", i)
	}
	b.WriteString("\t\tif (gtest_tick_semaphore)\n\t\t\tDTRACE_PROBE1(gtest, tick, i);\n\t\tusleep(1000);\n\t}\n}\n")
	return b.String()
}

// probeSites are the addresses, in a non-PIE binary, of every uprobe'd
// function and of the USDT semaphore.
type probeSites struct {
	funcs     []uint64
	semaphore uint64
}

func readProbeSites(t *testing.T, bin string) probeSites {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var s probeSites
	for _, sym := range syms {
		switch {
		case sym.Name == "gtest_tick_semaphore":
			s.semaphore = sym.Value
		case strings.HasPrefix(sym.Name, "g") && elf.ST_TYPE(sym.Info) == elf.STT_FUNC:
			if _, err := strconv.Atoi(sym.Name[1:]); err == nil {
				s.funcs = append(s.funcs, sym.Value)
			}
		}
	}
	if len(s.funcs) != detachFuncs || s.semaphore == 0 {
		t.Fatalf("%s: found %d functions and semaphore %#x", bin, len(s.funcs), s.semaphore)
	}
	return s
}

// processImage is what a tracer changes in a traced process: the first
// byte of each probed function (int3 while a uprobe is there) and the
// USDT semaphore.
type processImage struct {
	first     []byte
	semaphore uint16
}

func readImage(t *testing.T, pid int, s probeSites) processImage {
	t.Helper()
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	var img processImage
	b := make([]byte, 2)
	for _, addr := range s.funcs {
		if _, err := mem.ReadAt(b[:1], int64(addr)); err != nil {
			t.Fatalf("read %#x of %d: %v", addr, pid, err)
		}
		img.first = append(img.first, b[0])
	}
	if _, err := mem.ReadAt(b, int64(s.semaphore)); err != nil {
		t.Fatal(err)
	}
	img.semaphore = uint16(b[0]) | uint16(b[1])<<8
	return img
}

// detachRuns is how many times each stopping pattern runs;
// GTRACE_DETACH_RUNS overrides it (scripts/soak-detach.sh runs 100).
func detachRuns(t *testing.T) int {
	if s := os.Getenv("GTRACE_DETACH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("GTRACE_DETACH_RUNS=%q: want a positive number", s)
		}
		return n
	}
	return 3
}

// TestDetachLeavesNothing stops gtrace while its uprobes and USDT probe
// fire, in the ways that left uprobes registered in the kernel when
// gtrace's own threads attached and closed them: a second SIGINT or a
// SIGKILL during shutdown, and a SIGKILL during attaching. Afterwards,
// once the kernel has detached the probes, no breakpoint may be left in
// the traced process, and its semaphore must be down.
func TestDetachLeavesNothing(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "target", map[string]string{"target.c": detachTarget()}, "-O1", "-no-pie", "-fno-pie")
	sites := readProbeSites(t, bin)
	target := exec.Command(bin)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		target.Process.Kill()
		target.Wait()
	}()
	clean := readImage(t, target.Process.Pid, sites)
	for _, b := range clean.first {
		if b == 0xcc {
			t.Fatal("the target has a breakpoint before it is traced")
		}
	}
	script := fmt.Sprintf("uprobe:%s:g* { @[probe] = count(); } usdt:%s:gtest:tick { @ticks = count(); }", bin, bin)
	patterns := []struct {
		name  string
		first syscall.Signal // sent once attached, or 0 to kill while attaching
		then  syscall.Signal
	}{
		{"second SIGINT", syscall.SIGINT, syscall.SIGINT},
		{"SIGINT then SIGKILL", syscall.SIGINT, syscall.SIGKILL},
		{"SIGKILL while attaching", 0, syscall.SIGKILL},
	}
	runs := detachRuns(t)
	// The wildcard attaches through one uprobe_multi link where the
	// kernel has them, and through a perf event and a link per function.
	modes := detachModes()
	for n := range len(modes) * len(patterns) {
		mode, p := modes[n/len(patterns)], patterns[n%len(patterns)]
		t.Run(mode.name+"/"+p.name, func(t *testing.T) {
			var worst time.Duration
			for i := range runs {
				var cmd *exec.Cmd
				if p.first == 0 {
					cmd = exec.Command(harness.Bin(), append(mode.args, "-e", script)...)
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					// Loading takes some 10 ms, attaching the 61
					// probes as long or longer.
					time.Sleep(time.Duration(rand.IntN(40_000)) * time.Microsecond)
				} else {
					cmd = startTracing(t, append(mode.args, "-e", script))
					if n := multiLinks(t, bin); n != mode.multiLinks {
						t.Fatalf("run %d: %d uprobe_multi links on %s, want %d", i, n, bin, mode.multiLinks)
					}
					// Let events flow, then stop it at a random
					// moment of its shutdown.
					time.Sleep(time.Duration(rand.IntN(100)) * time.Millisecond)
					traced := readImage(t, target.Process.Pid, sites)
					if traced.semaphore == 0 || !bytes.Contains(traced.first, []byte{0xcc}) {
						t.Fatalf("run %d: while traced, semaphore %d and first bytes % x: the probes are not there",
							i, traced.semaphore, traced.first)
					}
					cmd.Process.Signal(p.first)
					time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
				}
				cmd.Process.Signal(p.then)
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					t.Fatalf("run %d: gtrace still runs 10 s after it was stopped", i)
				}
				// The kernel detaches the probes as gtrace's keeper
				// exits, a few seconds for these 61.
				exited := time.Now()
				after := readImage(t, target.Process.Pid, sites)
				for (!bytes.Equal(after.first, clean.first) || after.semaphore != 0) && time.Since(exited) < time.Minute {
					time.Sleep(50 * time.Millisecond)
					after = readImage(t, target.Process.Pid, sites)
				}
				worst = max(worst, time.Since(exited))
				if !bytes.Equal(after.first, clean.first) || after.semaphore != 0 {
					t.Fatalf("run %d: a minute after gtrace exited, semaphore %d and first bytes\n% x\nwant 0 and\n% x",
						i, after.semaphore, after.first, clean.first)
				}
			}
			t.Logf("%d runs, nothing left behind; the longest wait for the kernel's detach after gtrace exited: %v",
				runs, worst.Round(time.Millisecond))
		})
	}
}

// detachMode is a way the uprobes of TestDetachLeavesNothing attach.
type detachMode struct {
	name       string
	args       []string // gtrace's options
	multiLinks int      // uprobe_multi links on the target
}

// detachModes are the ways of attaching this kernel offers.
func detachModes() []detachMode {
	modes := []detachMode{{"link per function", []string{"--no-feature", "uprobe_multi"}, 0}}
	if features.HaveBPFLinkUprobeMulti() == nil {
		modes = append(modes, detachMode{"uprobe_multi", nil, 1})
	}
	return modes
}

// startTracing is harness.StartTracing with gtrace's arguments: it
// returns once every probe is attached.
func startTracing(t *testing.T, args []string) *exec.Cmd {
	t.Helper()
	tracer := exec.Command(harness.Bin(), append([]string{"-v"}, args...)...)
	tracer.Stdout = io.Discard
	attached := func(l string) bool { return strings.HasPrefix(l, "attached ") }
	go harness.Drain(harness.StartWait(t, tracer, harness.Stderr, attached, nil))
	t.Cleanup(func() {
		tracer.Process.Signal(syscall.SIGINT)
		tracer.Wait()
	})
	return tracer
}

// multiLinks counts the uprobe_multi links on the file bin.
func multiLinks(t *testing.T, bin string) int {
	t.Helper()
	ids, err := harness.Links()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id := range ids {
		l, err := link.NewFromID(id)
		if err != nil {
			continue // gone meanwhile
		}
		info, err := l.Info()
		l.Close()
		if err == nil && info.Type == link.UprobeMultiType && info.UprobeMulti() != nil && info.UprobeMulti().File == bin {
			n++
		}
	}
	return n
}

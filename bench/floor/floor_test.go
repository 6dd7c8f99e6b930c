package floor

import (
	"bytes"
	"errors"
	"math"
	"math/bits"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"gtrace/bench/workload"
	"gtrace/internal/testutils"
	"gtrace/internal/vmtest"
	"gtrace/symbol"
)

// reads is how many one-byte reads dd makes; startup is a bound on the
// other reads it makes, loading libraries.
const (
	reads   = 2000
	startup = 50
)

// dd is the run of dd the floor traced.
type dd struct {
	pid uint32
}

// checks says what each script's maps must hold after dd ran; scripts
// with no maps only have their programs' run counts checked.
var checks = map[int]func(t *testing.T, tr *Tracer, d dd){
	9: func(t *testing.T, tr *Tracer, d dd) {
		if n := lookupSum(t, tr.maps["counts"], uint32(0)); n < reads {
			t.Errorf("@ = %d, want at least %d", n, reads)
		}
	},
	10: func(t *testing.T, tr *Tracer, d dd) {
		checkDD(t, lookupSum(t, tr.maps["counts"], uint64(d.pid)))
	},
	11: func(t *testing.T, tr *Tracer, d dd) {
		checkDD(t, lookupSum(t, tr.maps["counts"], comm("dd")))
	},
	12: func(t *testing.T, tr *Tracer, d dd) {
		key := struct {
			Pid  uint64
			Comm [16]byte
		}{uint64(d.pid), comm("dd")}
		checkDD(t, lookupSum(t, tr.maps["counts"], key))
	},
	13: func(t *testing.T, tr *Tracer, d dd) {
		var id int32
		checkStacks(t, tr, &id, func() bool { return id >= 0 })
	},
	14: func(t *testing.T, tr *Tracer, d dd) {
		var key struct {
			ID  int32
			Pid uint32
		}
		checkStacks(t, tr, &key, func() bool { return key.Pid == d.pid && key.ID >= 0 })
	},
	15: func(t *testing.T, tr *Tracer, d dd) {
		if n := lookupSum(t, tr.maps["hist"], uint32(bucketOf(1))); n < reads {
			t.Errorf("hist bucket of 1 holds %d, want at least %d", n, reads)
		}
	},
	16: func(t *testing.T, tr *Tracer, d dd) {
		var total uint64
		for i := uint32(0); i < histSlots; i++ {
			total += lookupSum(t, tr.maps["hist"], i)
		}
		if total < reads {
			t.Errorf("hist holds %d samples, want at least %d", total, reads)
		}
	},
	17: func(t *testing.T, tr *Tracer, d dd) {
		var key struct {
			Kstack, Ustack int32
			Pid, Bucket    uint32
		}
		checkStacks(t, tr, &key, func() bool {
			return key.Pid == d.pid && key.Bucket == uint32(bucketOf(1)) && key.Kstack >= 0 && key.Ustack >= 0
		})
	},
}

// checkDD checks a count of dd's reads.
func checkDD(t *testing.T, n uint64) {
	t.Helper()
	if n < reads || n > reads+startup {
		t.Errorf("dd's count is %d, want %d reads and at most %d more", n, reads, startup)
	}
}

// checkStacks checks that one key of the counts map for which match
// reports true, after the key was read into key, counted all dd's reads:
// they all come from the same place.
func checkStacks(t *testing.T, tr *Tracer, key any, match func() bool) {
	t.Helper()
	var perCPU []uint64
	var best uint64
	it := tr.maps["counts"].Iterate()
	for it.Next(key, &perCPU) {
		if n := sum(perCPU); match() && n > best {
			best = n
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if best < reads {
		t.Errorf("the largest count of a matching stack key is %d, want at least %d", best, reads)
	}
}

func lookupSum(t *testing.T, m *ebpf.Map, key any) uint64 {
	t.Helper()
	var perCPU []uint64
	if err := m.Lookup(key, &perCPU); err != nil {
		t.Fatalf("lookup %v: %v", key, err)
	}
	return sum(perCPU)
}

func sum(vs []uint64) uint64 {
	var n uint64
	for _, v := range vs {
		n += v
	}
	return n
}

func comm(s string) [16]byte {
	var c [16]byte
	copy(c[:], s)
	return c
}

// bucketOf is the reference of hist()'s bucket, as bpftrace counts them.
func bucketOf(v int64) int {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return 1
	}
	return 1 + bits.Len64(uint64(v))
}

// TestFloors loads each floor on the syscall tracepoints, runs dd, and
// checks what the floor counted.
func TestFloors(t *testing.T) {
	testutils.RequireRoot(t)
	libc, err := Libc()
	if err != nil {
		t.Fatal(err)
	}
	var scripts []int
	for n := 1; n <= Scripts; n++ {
		scripts = append(scripts, n)
	}
	testScripts(t, scripts, Options{Libc: libc})
}

// TestKprobeFloors does the same with vfs_read's kprobes, in a VM, as
// this kernel has none. The guest has no libc, so scripts 06 and 07,
// libc's uprobes in both modes, are left to TestFloors. One vCPU: under
// TCG, attaching and detaching vfs_read's kprobes while dd calls it on
// another vCPU can crash the guest kernel (see tests/vm/vm_bench_test.go).
func TestKprobeFloors(t *testing.T) {
	if !vmtest.InVM(t, vmtest.Config{Kernel: vmtest.Debian61, CPUs: 1}) {
		return
	}
	testScripts(t, []int{1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, Options{Kprobes: true})
}

func testScripts(t *testing.T, scripts []int, opts Options) {
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		t.Fatalf("enable BPF statistics: %v", err)
	}
	defer stats.Close()
	for _, n := range scripts {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var out bytes.Buffer
			opts.Output = &out
			tr, err := Load(n, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			d := runDD(t)

			progs := tr.Programs()
			if n == 1 && len(progs) != 0 {
				t.Errorf("script 1 has %d programs, want none", len(progs))
			}
			if n != 1 && len(progs) == 0 {
				t.Errorf("script %d has no programs", n)
			}
			var ids []ebpf.ProgramID
			for _, p := range progs {
				st, err := p.Stats()
				if err != nil {
					t.Fatal(err)
				}
				if st.RunCount < reads {
					t.Errorf("%s ran %d times, want at least %d", p, st.RunCount, reads)
				}
				info, err := p.Info()
				if err != nil {
					t.Fatal(err)
				}
				id, _ := info.ID()
				ids = append(ids, id)
			}
			if check := checks[n]; check != nil {
				check(t, tr, d)
			}
			lost, err := tr.Lost()
			if err != nil {
				t.Fatal(err)
			}

			if err := tr.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if n == 18 {
				lines := 0
				for _, line := range strings.SplitAfter(out.String(), "\n") {
					if line == "1 bytes\n" {
						lines++
					}
				}
				if lines < reads {
					t.Errorf("%d lines of \"1 bytes\" (and %d lost), want at least %d", lines, lost, reads)
				}
			} else if lost != 0 || out.Len() != 0 {
				t.Errorf("%d lost and %d bytes of output, want none", lost, out.Len())
			}
			for _, id := range ids {
				checkGone(t, id)
			}
		})
	}
}

// runDD runs dd pinned to CPU 0, as the bench does.
func runDD(t *testing.T) dd {
	t.Helper()
	r, err := workload.DD(0, reads)
	if err != nil {
		t.Fatal(err)
	}
	return dd{pid: uint32(r.Pid)}
}

// checkGone waits for the kernel to free a program, which it does after
// an RCU grace period.
func checkGone(t *testing.T, id ebpf.ProgramID) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			return
		}
		p.Close()
		if time.Now().After(deadline) {
			t.Errorf("program %d is still loaded after Close", id)
			return
		}
	}
}

// TestBucket runs the hist bucket's instructions on edge values with
// BPF_PROG_TEST_RUN and compares them with the reference.
func TestBucket(t *testing.T) {
	testutils.RequireRoot(t)
	values := []int64{math.MinInt64, -1 << 32, -2, -1, 0, math.MaxInt64}
	for k := 0; k < 63; k++ {
		values = append(values, 1<<k-1, 1<<k, 1<<k+1)
	}
	for _, v := range values {
		var p prog
		p.emit(asm.LoadImm(asm.R2, v, asm.DWord))
		p.bucket(asm.R0, asm.R2, asm.R3, "b")
		p.emit(asm.Return())
		fn, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Type:         ebpf.SocketFilter,
			Instructions: p.insns,
			License:      "GPL",
		})
		if err != nil {
			t.Fatalf("load the bucket of %d: %v", v, err)
		}
		got, err := fn.Run(&ebpf.RunOptions{Data: make([]byte, 14)})
		fn.Close()
		if err != nil {
			t.Fatalf("run the bucket of %d: %v", v, err)
		}
		if want := bucketOf(v); int(got) != want {
			t.Errorf("bucket of %d = %d, want %d", v, got, want)
		}
		if int(got) >= histSlots {
			t.Errorf("bucket of %d = %d, beyond the %d slots", v, got, histSlots)
		}
	}
}

// TestLoadRange checks that scripts outside 1..18 are refused.
func TestLoadRange(t *testing.T) {
	for _, n := range []int{0, Scripts + 1} {
		if _, err := Load(n, Options{}); err == nil {
			t.Errorf("Load(%d) succeeded", n)
		}
	}
}

// TestLibc checks that dd's libc is found and defines __read.
func TestLibc(t *testing.T) {
	path, err := Libc()
	if errors.Is(err, exec.ErrNotFound) {
		testutils.Skip(t, "dd is not in PATH")
	}
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := symbol.Functions(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(funcs, "__read") {
		t.Errorf("Libc() = %s, which has no __read", path)
	}
}

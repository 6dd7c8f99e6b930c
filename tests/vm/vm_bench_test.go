package vm

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"gtrace/bench"
	"gtrace/internal/vmtest"
)

// vmBenchScript runs gtrace bench with kprobes, as written in the study:
// the overhead scripts on vfs_read, but for the uprobe ones (the guest has
// no libc), and the attach sweep over kernel functions.
const vmBenchScript = vmShellFuncs + `
section overhead /gtrace bench overhead --kprobes -n 1 --events 2000 --scripts 2,3,8-18 --tracer gtrace=/gtrace -f json
section attach /gtrace bench attach --kprobes -n 1 --tracer gtrace=/gtrace -f json
`

// TestVMBenchKprobes checks that the kprobe forms of gtrace bench produce
// a complete result: a measured point for every script under gtrace and
// the floor, and every phase of every probe set. It asserts no timing:
// the guest is emulated.
func TestVMBenchKprobes(t *testing.T) {
	res := vmtest.Run(t, vmtest.Config{
		Kernel:  vmtest.Debian612,
		Files:   map[string]string{"/gtrace": vmtest.BuildGtrace(t)},
		Timeout: 5 * time.Minute,
		// The bench attaches and detaches kprobes on vfs_read dozens
		// of times while dd calls it. With two vCPUs under TCG, the
		// guest kernel crashed in its int3 handler while ftrace patched
		// vfs_read's entry under a running dd, in 3 of 5 runs; with
		// one, no code is modified under another CPU.
		CPUs: 1,
	}, "sh", "-c", vmBenchScript)
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	sections, err := parseVMSections(res.Stdout)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("overhead", func(t *testing.T) {
		s := sections["overhead"]
		t.Logf("stdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
		var r bench.OverheadResult
		if err := json.Unmarshal([]byte(s.stdout), &r); s.status != 0 || err != nil {
			t.Fatalf("status %d, %v\nstdout:\n%s\nstderr:\n%s", s.status, err, s.stdout, s.stderr)
		}
		if !r.Kprobes {
			t.Error("the result does not say it ran on kprobes")
		}
		scripts := []int{2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
		var got []int
		for _, p := range r.Points {
			if p.Tracer == "floor" {
				got = append(got, p.Script)
			}
			// Each of dd's 2000 reads is a vfs_read call.
			if p.Runs < 2000 || p.KernelNs <= 0 {
				t.Errorf("script %02d under %s: %d runs, %v ns per run", p.Script, p.Tracer, p.Runs, p.KernelNs)
			}
		}
		if !slices.Equal(got, scripts) || len(r.Points) != 2*len(scripts) {
			t.Errorf("points for scripts %v (%d points), want %v under floor and gtrace", got, len(r.Points), scripts)
		}
	})

	t.Run("attach", func(t *testing.T) {
		s := sections["attach"]
		t.Logf("stdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
		var r bench.AttachResult
		if err := json.Unmarshal([]byte(s.stdout), &r); s.status != 0 || err != nil {
			t.Fatalf("status %d, %v\nstdout:\n%s\nstderr:\n%s", s.status, err, s.stdout, s.stderr)
		}
		var ns []int
		for _, p := range r.Points {
			ns = append(ns, p.N)
			if p.Start <= 0 || p.Detach <= 0 || p.Attach < 0 {
				t.Errorf("%s: start %v, attach %v, detach %v", p.Probes, p.Start, p.Attach, p.Detach)
			}
		}
		if len(ns) != 4 || ns[0] != 1 || ns[1] != 10 || ns[2] != 100 || ns[3] < 20 {
			t.Errorf("probe sets of %v functions, want 1, 10, 100 and every vfs_ function", ns)
		}
	})
}

package e2e

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// tracerProgram returns the id of the one BPF program that process pid
// holds, directly or through a link.
func tracerProgram(t *testing.T, pid int) string {
	t.Helper()
	fdinfos, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fdinfo/*")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, fi := range fdinfos {
		b, err := os.ReadFile(fi)
		if err != nil {
			continue
		}
		if m := regexp.MustCompile(`(?m)^prog_id:\s*(\d+)$`).FindStringSubmatch(string(b)); m != nil {
			ids[m[1]] = true
		}
	}
	if len(ids) != 1 {
		t.Fatalf("process %d holds %d programs, want 1: %v", pid, len(ids), ids)
	}
	for id := range ids {
		return id
	}
	return ""
}

// startProf starts gtrace prof with args and returns once its window
// has begun, with what it writes to stdout.
func startProf(t *testing.T, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	prof := exec.Command(harness.Bin(), append([]string{"prof"}, args...)...)
	var stdout strings.Builder
	prof.Stdout = &stdout
	profiling := func(l string) bool { return strings.HasPrefix(l, "Profiling program ") }
	go harness.Drain(harness.StartWait(t, prof, harness.Stderr, profiling, nil))
	return prof, &stdout
}

// runCalls runs bin, which calls leaf 5 times, n times.
func runCalls(t *testing.T, bin string, n int) {
	t.Helper()
	for range n {
		if out, err := exec.Command(bin).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", bin, err, out)
		}
	}
}

// TestProf profiles a uprobe that another gtrace runs, while a program
// calls the probed function a known number of times: the kernel's
// run_cnt for the window is exactly the calls. This host's kernel
// refuses tracing programs, so there fentry/fexit must be reported
// unavailable, with the reason; tests/vm/vm_prof_test.go checks them where
// the kernel allows them. The kernel's statistics setting is as it was
// afterwards.
func TestProf(t *testing.T) {
	testutils.RequireRoot(t)
	harness.StatsSysctlKept(t, "gtrace prof")
	bin := harness.BuildC(t, "profiled", map[string]string{"profiled.c": harness.LeafProgram}, "-O1")
	id := tracerProgram(t, harness.StartTracing(t, "uprobe:"+bin+":leaf { @ = count(); }", io.Discard).Process.Pid)
	_, pmuErr := os.Stat("/sys/bus/event_source/devices/cpu")
	noPMU := os.IsNotExist(pmuErr)

	t.Run("json", func(t *testing.T) {
		prof, out := startProf(t, "-d", "4s", "-f", "json", id)
		runCalls(t, bin, 3)
		if err := prof.Wait(); err != nil {
			t.Fatalf("gtrace prof: %v", err)
		}
		var rec struct {
			Type string
			Data struct {
				Program struct{ ID uint32 }
				Fentry  *struct {
					RunCnt uint64 `json:"run_cnt"`
				}
				FentryUnavailable string `json:"fentry_unavailable"`
				Kernel            struct {
					RunCnt    uint64 `json:"run_cnt"`
					RunTimeNs uint64 `json:"run_time_ns"`
				}
				HardwarePMU bool   `json:"hardware_pmu"`
				NoPMUReason string `json:"no_pmu_reason"`
			}
		}
		if err := json.Unmarshal([]byte(out.String()), &rec); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		d := rec.Data
		if rec.Type != "prof" || strconv.Itoa(int(d.Program.ID)) != id {
			t.Fatalf("want a report on program %s: %s", id, out.String())
		}
		if d.Kernel.RunCnt != 15 || d.Kernel.RunTimeNs == 0 {
			t.Errorf("kernel statistics %+v: want the 15 calls, with run time", d.Kernel)
		}
		switch {
		case d.Fentry != nil && d.FentryUnavailable == "":
			t.Logf("fentry/fexit available")
			if d.Fentry.RunCnt != 15 {
				t.Errorf("fentry/fexit counted %d runs, want 15", d.Fentry.RunCnt)
			}
		case d.Fentry == nil && strings.Contains(d.FentryUnavailable, "refused") &&
			strings.HasSuffix(d.FentryUnavailable, "operation not permitted"):
			t.Logf("fentry/fexit unavailable: %s", d.FentryUnavailable)
		default:
			t.Errorf("want fentry/fexit figures, or the reason the kernel refused them: %s", out.String())
		}
		if d.HardwarePMU == noPMU || noPMU && !strings.Contains(d.NoPMUReason, "perf_event_open cycles") {
			t.Errorf("hardware PMU %v (%q), but /sys/bus/event_source/devices/cpu: %v", d.HardwarePMU, d.NoPMUReason, pmuErr)
		}
	})

	t.Run("text until SIGINT", func(t *testing.T) {
		prof, out := startProf(t, id)
		runCalls(t, bin, 1)
		prof.Process.Signal(syscall.SIGINT)
		if err := prof.Wait(); err != nil {
			t.Fatalf("gtrace prof: %v", err)
		}
		text := out.String()
		if !regexp.MustCompile(`(?m)^kernel statistics +5 +[1-9]\d* +\d+$`).MatchString(text) {
			t.Errorf("want 5 runs in the kernel statistics row:\n%s", text)
		}
		if !strings.Contains(text, "\nfentry/fexit unavailable: ") && !strings.Contains(text, "\nfentry/fexit (entry to exit) ") {
			t.Errorf("no fentry/fexit row, nor why:\n%s", text)
		}
		if noPMU && !strings.Contains(text, "\nNo hardware PMU (") {
			t.Errorf("the machine has no hardware PMU, and the report does not say so:\n%s", text)
		}
	})

	t.Run("dump", func(t *testing.T) {
		r := harness.Gtrace(t, "prof", "--dump", id)
		if r.Code != 0 {
			t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
		}
		// The first instruction saves the context; its index is padded
		// to the width of the last one.
		for _, want := range []string{"translated instructions\nuprobe_", "\t *0: MovReg dst: r6 src: r1\n", ": Exit\n", "JITed code, "} {
			if !regexp.MustCompile(want).MatchString(r.Stdout) {
				t.Errorf("no %q in the dump:\n%s", want, r.Stdout)
			}
		}
	})
}

// TestProfErrors checks that gtrace prof refuses what it cannot profile.
func TestProfErrors(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown id", []string{"prof", "-d", "1s", "4000000000"}, "ERROR: no BPF program with id 4000000000\n"},
		{"unknown name", []string{"prof", "-d", "1s", "gtrace_nosuch"}, "ERROR: no BPF program named \"gtrace_nosuch\"\n"},
		{"dump of unknown id", []string{"prof", "--dump", "4000000000"}, "ERROR: no BPF program with id 4000000000\n"},
		{"no program", []string{"prof"}, "ERROR: invalid arguments to prof\n"},
		{"bad duration", []string{"prof", "-d", "soon", "1"}, "ERROR: invalid arguments to prof\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := harness.Gtrace(t, tc.args...)
			if r.Code == 0 || !strings.HasPrefix(r.Stderr, tc.want) {
				t.Errorf("exit code %d, stderr %q; want non-zero and %q", r.Code, r.Stderr, tc.want)
			}
		})
	}
}

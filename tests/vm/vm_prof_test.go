package vm

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/internal/vmtest"
)

// The guest kernels allow fentry on BPF programs, so gtrace prof
// measures there with fentry and fexit. It profiles two kprobes on
// vfs_read: one gtrace loaded, by id, and one that
// tests/testdata/kprobeload loaded, by name, each while dd makes
// vmProfReads one-byte reads within the window. The window is long
// enough for the reads under TCG.
const (
	vmProfReads  = 200
	vmProfWindow = "6s"
)

// vmProfScript is the guest's shell script.
const vmProfScript = vmShellFuncs + `
# profile NAME TARGET runs gtrace prof on TARGET while dd makes $READS
# reads, and prints its JSON report as section NAME.
profile() {
	/gtrace prof -d $WINDOW -f json $2 >/tmp/$1.out 2>/tmp/$1.err &
	p=$!
	i=0
	until grep -q '^Profiling' /tmp/$1.err; do
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "gtrace prof has not started after 60 s" >>/tmp/$1.err
			break
		fi
		sleep 0.1
	done
	dd if=/dev/zero of=/dev/null bs=1 count=$READS 2>/dev/null
	wait $p
	emit $1 $? /tmp/$1.out /tmp/$1.err
}

/gtrace -e 'kprobe:vfs_read /comm == "dd"/ { @ = count(); }' >/tmp/trace.out 2>/tmp/trace.err &
g=$!
wait_links $g 1 >>/tmp/trace.err
id=$(grep -h '^prog_id:' /proc/$g/fdinfo/* | sort -u | awk '{print $2}')
profile gtrace $id
section gtrace-dump /gtrace prof --dump $id
kill -INT $g
wait $g
emit trace $? /tmp/trace.out /tmp/trace.err

/kprobeload >/tmp/kprobeload.out 2>/tmp/kprobeload.err &
k=$!
wait_links $k 1 >>/tmp/kprobeload.err
profile other kprobeload
section other-text /gtrace prof -d 1s kprobeload
kill -INT $k
wait $k
emit kprobeload $? /tmp/kprobeload.out /tmp/kprobeload.err
`

// vmProfReport is the part of gtrace prof's JSON report the test reads.
type vmProfReport struct {
	Type string
	Data struct {
		Program struct {
			ID   uint32
			Name string
		}
		Fentry *struct {
			vmProfRuns
			Counters []struct {
				Name   string
				Total  uint64
				PerRun float64 `json:"per_run"`
			}
		}
		FentryUnavailable string `json:"fentry_unavailable"`
		Kernel            vmProfRuns
		Profiler          *vmProfRuns
		HardwarePMU       bool   `json:"hardware_pmu"`
		NoPMUReason       string `json:"no_pmu_reason"`
	}
}

type vmProfRuns struct {
	RunCnt    uint64 `json:"run_cnt"`
	RunTimeNs uint64 `json:"run_time_ns"`
	AvgNs     uint64 `json:"avg_ns"`
}

// TestVMProf profiles a kprobe gtrace loaded and one another process
// loaded: fentry and fexit count the same runs as the kernel's
// statistics, at least the workload's reads, and time them.
func TestVMProf(t *testing.T) {
	files := map[string]string{
		"/gtrace":     vmtest.BuildGtrace(t),
		"/kprobeload": buildTestdata(t, "kprobeload"),
	}
	env := map[string]string{"READS": strconv.Itoa(vmProfReads), "WINDOW": vmProfWindow}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			res := vmtest.Run(t, vmtest.Config{Kernel: k, Files: files, Env: env, Timeout: 3 * time.Minute,
				// The kernel times runs with sched_clock. With two
				// vCPUs under TCG the guest often finds their TSCs
				// unsynchronized and marks the TSC unstable; sched_clock
				// then corrects itself at ticks, by up to a tick, and
				// one run's time once grew by 5 ms. One vCPU keeps it
				// stable.
				CPUs: 1,
			}, "sh", "-c", vmProfScript)
			if res.ExitCode != 0 {
				t.Fatalf("guest script exited %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			sections, err := parseVMSections(res.Stdout)
			if err != nil {
				t.Fatalf("%v\nguest stdout:\n%s", err, res.Stdout)
			}
			section := func(t *testing.T, name string) vmSection {
				t.Helper()
				if _, ok := sections[name]; !ok {
					t.Logf("guest output:\n%s", res.Stdout)
				}
				return sections.get(t, name, 0)
			}
			t.Run("gtrace", func(t *testing.T) {
				checkVMProf(t, section(t, "gtrace").stdout, "")
				section(t, "trace")
			})
			t.Run("dump", func(t *testing.T) {
				out := section(t, "gtrace-dump").stdout
				for _, want := range []string{"translated instructions\nkprobe_vfs_read:\n", "JITed code, ", " retq\n", ": Exit\n"} {
					if !strings.Contains(out, want) {
						t.Errorf("no %q in the dump", want)
					}
				}
			})
			t.Run("other", func(t *testing.T) {
				checkVMProf(t, section(t, "other").stdout, "kprobeload")
				section(t, "kprobeload")
			})
			t.Run("text", func(t *testing.T) {
				out := section(t, "other-text").stdout
				for _, want := range []string{"fentry/fexit (entry to exit)", "kernel statistics", "  of which fentry+fexit", "No hardware PMU (", "cpu_clock_ns"} {
					if !strings.Contains(out, want) {
						t.Errorf("no %q in the report", want)
					}
				}
			})
		})
	}
}

// checkVMProf checks a JSON report of a profile over the workload.
func checkVMProf(t *testing.T, out, name string) {
	t.Helper()
	var r vmProfReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	d := r.Data
	if r.Type != "prof" || d.Fentry == nil || d.FentryUnavailable != "" {
		t.Fatalf("no fentry/fexit figures: %s", out)
	}
	if name != "" && d.Program.Name != name {
		t.Errorf("profiled %q, want %q", d.Program.Name, name)
	}
	f, k := d.Fentry.vmProfRuns, d.Kernel
	// Both are read together, when neither moved (bpfprof's sample).
	if f.RunCnt != k.RunCnt {
		t.Errorf("fentry/fexit counted %d runs, the kernel %d", f.RunCnt, k.RunCnt)
	}
	// Every vfs_read in the guest runs the kprobe, dd's among them.
	if f.RunCnt < vmProfReads {
		t.Errorf("%d runs, want at least dd's %d reads", f.RunCnt, vmProfReads)
	}
	// The kernel times each run around the trampoline, which runs the
	// fentry program, the target and the fexit program, and it times
	// fentry and fexit too. The profiler times the target from the end
	// of fentry to the start of fexit. So each of the two is at most the
	// kernel's figure for the target (their sum can exceed it a little:
	// fentry reads the clock before it returns, fexit after it starts).
	// How much of the kernel's figure is the trampoline's own is not
	// checked: under TCG on a loaded host a descheduled vCPU inflates it
	// (the kernel's figure less fentry's and fexit's was once 22 times
	// the target's), so a bound on it tests the host, not the profiler.
	p := d.Profiler
	if p == nil || p.RunCnt != k.RunCnt {
		t.Fatalf("want the kernel's figures of fentry and fexit, one run per target run: %s", out)
	}
	if f.RunTimeNs == 0 || f.RunTimeNs > k.RunTimeNs || p.RunTimeNs > k.RunTimeNs {
		t.Errorf("fentry/fexit timed the target %d ns, the kernel %d ns, of which fentry+fexit %d ns: want the first and the last each at most the second",
			f.RunTimeNs, k.RunTimeNs, p.RunTimeNs)
	}
	if d.HardwarePMU || !strings.Contains(d.NoPMUReason, "perf_event_open cycles") {
		t.Errorf("want no hardware PMU in the guest, and why: %s", out)
	}
	if len(d.Fentry.Counters) != 1 || d.Fentry.Counters[0].Name != "cpu_clock_ns" || d.Fentry.Counters[0].PerRun <= 0 {
		t.Errorf("want the software CPU clock counted for each run: %+v", d.Fentry.Counters)
	}
}

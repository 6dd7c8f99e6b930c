package kernel

import "golang.org/x/sys/unix"

// PerfEvent is a software or hardware perf event that bpftrace accepts as
// software:NAME:COUNT or hardware:NAME:COUNT.
type PerfEvent struct {
	Name  string
	Alias string // empty if the event has no short name
	// Config is the perf_event_attr.config value (PERF_COUNT_SW_* or
	// PERF_COUNT_HW_*).
	Config uint64
	// DefaultPeriod is the sample period bpftrace uses when no count is given.
	DefaultPeriod uint64
}

// SoftwareEvents is bpftrace's table of software events, sorted by name.
var SoftwareEvents = []PerfEvent{
	{"alignment-faults", "", unix.PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
	{"bpf-output", "", unix.PERF_COUNT_SW_BPF_OUTPUT, 1},
	{"context-switches", "cs", unix.PERF_COUNT_SW_CONTEXT_SWITCHES, 1000},
	{"cpu-clock", "cpu", unix.PERF_COUNT_SW_CPU_CLOCK, 1000000},
	{"cpu-migrations", "", unix.PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"dummy", "", unix.PERF_COUNT_SW_DUMMY, 1},
	{"emulation-faults", "", unix.PERF_COUNT_SW_EMULATION_FAULTS, 1},
	{"major-faults", "", unix.PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
	{"minor-faults", "", unix.PERF_COUNT_SW_PAGE_FAULTS_MIN, 100},
	{"page-faults", "faults", unix.PERF_COUNT_SW_PAGE_FAULTS, 100},
	{"task-clock", "", unix.PERF_COUNT_SW_TASK_CLOCK, 1},
}

// HardwareEvents is bpftrace's table of hardware events, sorted by name.
var HardwareEvents = []PerfEvent{
	{"backend-stalls", "", unix.PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000},
	{"branch-instructions", "branches", unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000},
	{"branch-misses", "", unix.PERF_COUNT_HW_BRANCH_MISSES, 100000},
	{"bus-cycles", "", unix.PERF_COUNT_HW_BUS_CYCLES, 100000},
	{"cache-misses", "", unix.PERF_COUNT_HW_CACHE_MISSES, 1000000},
	{"cache-references", "", unix.PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
	{"cpu-cycles", "cycles", unix.PERF_COUNT_HW_CPU_CYCLES, 1000000},
	{"frontend-stalls", "", unix.PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000},
	{"instructions", "", unix.PERF_COUNT_HW_INSTRUCTIONS, 1000000},
	{"ref-cycles", "", unix.PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
}

// LookupPerfEvent finds an event in table by name or alias.
func LookupPerfEvent(table []PerfEvent, name string) (PerfEvent, bool) {
	for _, ev := range table {
		if ev.Name == name || (ev.Alias != "" && ev.Alias == name) {
			return ev, true
		}
	}
	return PerfEvent{}, false
}

package kernel

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// OnlineCPUs returns the ids of the online CPUs. Per-CPU perf events must
// be opened on these; ebpf.PossibleCPU gives the count for per-CPU maps.
func OnlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("online cpus: %w", err)
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("online cpus: %w", err)
	}
	return cpus, nil
}

// parseCPUList parses the kernel's cpu list format, e.g. "0-3,5,7-8".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, r := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("parse cpu list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("parse cpu list %q: %w", s, err)
			}
		}
		if last < first {
			return nil, fmt.Errorf("parse cpu list %q: range %s is backwards", s, r)
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}

package kernel

import (
	"reflect"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "syscalls:sys_enter_read", true},
		{"syscalls:sys_enter_read", "syscalls:sys_enter_read", true},
		{"syscalls:sys_enter_read", "syscalls:sys_enter_readv", false},
		{"syscalls:sys_enter_read*", "syscalls:sys_enter_readv", true},
		{"syscalls:sys_enter_read*", "syscalls:sys_exit_read", false},
		{"*:sched_switch", "sched:sched_switch", true},
		{"*:sched_switch", "vmlinux:sched_switch", true},
		{"*:sched_switch", "sched:sched_switch2", false},
		{"sys_*_read", "sys_enter_read", true},
		{"sys_*_read", "sys_exit_read", true},
		{"sys_*_read", "sys_enter_pread64", false},
		{"*read*", "sys_enter_readlinkat", true},
		{"a*b", "abab", true}, // bpftrace's token search misses this one
		{"a*b*c", "aXbYbZc", true},
		{"a**c", "ac", true},
		{"cpu*", "cpu:", true},
		{"cpu-clock", "cpu-clock:", false},
		// Only '*' is special.
		{"sys_enter_rea?", "sys_enter_read", false},
		{"sys_enter_rea?", "sys_enter_rea?", true},
		{"{a,b}", "a", false},
		{"[ab]", "a", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-3", []int{0, 1, 2, 3}},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if err != nil {
			t.Errorf("parseCPUList(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "a", "0-b", "a-b", "1,", "3-1"} {
		if got, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", bad, got)
		}
	}
}

func TestOnlineCPUs(t *testing.T) {
	cpus, err := OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) == 0 || cpus[0] < 0 {
		t.Errorf("OnlineCPUs() = %v, want at least one CPU", cpus)
	}
}

package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Script is one of the 18 scripts of Benchmark 1 of "DTrace vs bpftrace"
// (after Brendan Gregg's BPF Performance Tools): each traces the reads of
// dd if=/dev/zero of=/dev/null bs=1, and so costs something per read.
type Script struct {
	N    int    // its number in the benchmark, 1 to 18
	Name string // what it measures
	// src traces vfs_read with kprobes, as the benchmark has it.
	src string
	// probes is how many probe programs must have run before the script
	// is attached: those the workload fires. The control has none.
	probes int
}

// Scripts are the scripts of Benchmark 1, in order.
var Scripts = []Script{
	// The study's control is `BEGIN {}`, which current bpftrace and
	// gtrace end once BEGIN has run: an hourly timer keeps the tracer
	// there, firing nothing meanwhile.
	{1, "control", `BEGIN {} interval:s:3600 {}`, 0},
	{2, "kprobe", `k:vfs_read { 1 }`, 1},
	{3, "kretprobe", `kr:vfs_read { 1 }`, 1},
	{4, "tracepoint entry", `t:syscalls:sys_enter_read { 1 }`, 1},
	{5, "tracepoint return", `t:syscalls:sys_exit_read { 1 }`, 1},
	{6, "uprobe", `u:libc:__read { 1 }`, 1},
	{7, "uretprobe", `ur:libc:__read { 1 }`, 1},
	{8, "filter", `k:vfs_read /arg2 > 0/ { 1 }`, 1},
	{9, "map", `k:vfs_read { @ = count() }`, 1},
	{10, "single key", `k:vfs_read { @[pid] = count() }`, 1},
	{11, "string key", `k:vfs_read { @[comm] = count() }`, 1},
	{12, "two keys", `k:vfs_read { @[pid, comm] = count() }`, 1},
	{13, "kernel stack", `k:vfs_read { @[kstack] = count() }`, 1},
	{14, "user stack", `k:vfs_read { @[ustack] = count() }`, 1},
	{15, "histogram", `k:vfs_read { @ = hist(arg2) }`, 1},
	{16, "timing", `k:vfs_read { @s[tid] = nsecs } kr:vfs_read /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }`, 2},
	{17, "multiple", `k:vfs_read { @[kstack, ustack] = hist(arg2) }`, 1},
	{18, "per-event printf", `k:vfs_read { printf("%d bytes\n", arg2) }`, 1},
}

// onTracepoints rewrites the kernel-function scripts for a kernel without
// kprobes: vfs_read's entry and return become the read system call's
// tracepoints, and its count argument, arg2, the tracepoint's field.
var onTracepoints = strings.NewReplacer(
	"kr:vfs_read", "t:syscalls:sys_exit_read",
	"k:vfs_read", "t:syscalls:sys_enter_read",
	"arg2", "args->count",
)

// Source returns the script's text: with kprobes on vfs_read, as the
// benchmark has it, or on the read system call's tracepoints.
func (s Script) Source(kprobes bool) string {
	if kprobes {
		return s.src
	}
	return onTracepoints.Replace(s.src)
}

// Uprobe says whether the script traces libc, which only reads through
// libc fire.
func (s Script) Uprobe() bool { return strings.HasPrefix(s.src, "u") }

// ParseScripts reads a list of script numbers such as "2,4,9-12"; an
// empty list is every script. A script named twice runs once.
func ParseScripts(list string) ([]Script, error) {
	if list == "" {
		return Scripts, nil
	}
	var out []Script
	for _, item := range strings.Split(list, ",") {
		from, to, isRange := strings.Cut(item, "-")
		lo, err := scriptNumber(from)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = scriptNumber(to); err != nil {
				return nil, err
			}
		}
		if hi < lo {
			return nil, fmt.Errorf("script range %q runs backwards", item)
		}
		for n := lo; n <= hi; n++ {
			if !slices.ContainsFunc(out, func(s Script) bool { return s.N == n }) {
				out = append(out, Scripts[n-1])
			}
		}
	}
	return out, nil
}

func scriptNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > len(Scripts) {
		return 0, fmt.Errorf("no script %q: the scripts are numbered 1 to %d", s, len(Scripts))
	}
	return n, nil
}

package e2e

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/kernel"
	"gtrace/tests/internal/harness"
)

// listLines runs a tracer with args (-l or -lv and a pattern) and returns
// its stdout lines. Listing must succeed, even when nothing matches.
func listLines(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	r := harness.Run(t, bin, args...)
	if r.Code != 0 {
		t.Fatalf("%s %q: exit code %d, stderr:\n%s", bin, args, r.Code, r.Stderr)
	}
	out := strings.TrimSuffix(r.Stdout, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// compareLines reports the first line where got and want differ.
func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: line %d: gtrace %q, want %q (gtrace %d lines, want %d)", what, i+1, g, w, len(got), len(want))
			return
		}
	}
}

// TestListBpftrace compares listings of tracepoints, where bpftrace 0.17
// and v0.26 agree, line for line with bpftrace 0.17's.
func TestListBpftrace(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	tests := [][]string{
		{"-l", "tracepoint:syscalls:sys_enter_read*"},
		{"-l", "t:syscalls:sys_enter_read*"},
		{"-l", "tracepoint:sched:*"},
		{"-l", "tracepoint:*:sys_enter_openat"},
		{"-l", "tracepoint:syscalls:sys_e*_read"},
		{"-l", "tracepoint:syscalls:sys_enter_read*,tracepoint:sched:sched_switch"},
		{"-l", "tracepoint:syscalls:sys_enter_read"},
		{"-l", "tracepoint:nosuch:*"},
		{"-l", "tracepoint:*"},
		{"-lv", "tracepoint:syscalls:sys_enter_openat"},
		{"-lv", "tracepoint:syscalls:sys_enter_read*"},
		{"-lv", "t:sched:sched_switch"},
		{"-lv", "tracepoint:raw_syscalls:*"},
		{"-lv", "tracepoint:syscalls:sys_enter_execve,tracepoint:syscalls:sys_exit_execve"},
		// Every tracepoint with its fields, taken from the format files
		// as both versions do.
		{"-lv", "tracepoint:*"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := listLines(t, bpftrace, args...)
			got := listLines(t, harness.Bin(), args...)
			compareLines(t, strings.Join(args, " "), got, want)
		})
	}
}

// TestListBareWord lists a pattern without a provider. bpftrace 0.17 also
// prints the pattern itself under hardware and software ("hardware:
// sys_enter_open*:"), as its matcher does not expand perf events without a
// second ':'; v0.26 matches the pattern against the event names, which
// end in ':', so nothing matches there. The tracepoints agree.
func TestListBareWord(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	const pattern = "sys_enter_open*"
	var want []string
	for _, l := range listLines(t, bpftrace, "-l", pattern) {
		if l == "hardware:"+pattern+":" || l == "software:"+pattern+":" {
			continue
		}
		want = append(want, l)
	}
	got := listLines(t, harness.Bin(), "-l", pattern)
	compareLines(t, "-l "+pattern, got, want)
	if len(got) == 0 {
		t.Errorf("-l %s lists nothing", pattern)
	}
}

// The software and hardware events and aliases of bpftrace v0.26
// (SW_PROBE_LIST and HW_PROBE_LIST in src/probe_matcher.h, the same
// names as in 0.17), listed each with a trailing ':' for the count.
var (
	softwareListing = []string{
		"software:alignment-faults:", "software:bpf-output:", "software:context-switches:",
		"software:cpu-clock:", "software:cpu-migrations:", "software:cpu:", "software:cs:",
		"software:dummy:", "software:emulation-faults:", "software:faults:",
		"software:major-faults:", "software:minor-faults:", "software:page-faults:",
		"software:task-clock:",
	}
	hardwareListing = []string{
		"hardware:backend-stalls:", "hardware:branch-instructions:", "hardware:branch-misses:",
		"hardware:branches:", "hardware:bus-cycles:", "hardware:cache-misses:",
		"hardware:cache-references:", "hardware:cpu-cycles:", "hardware:cycles:",
		"hardware:frontend-stalls:", "hardware:instructions:", "hardware:ref-cycles:",
	}
)

// TestListPerfEvents lists software and hardware events. Here bpftrace
// 0.17 prints the pattern back ("software:*:"), never the events, so
// gtrace follows v0.26 (get_symbols_from_list in src/probe_matcher.cpp):
// every event name and alias, sorted, the same with -lv.
func TestListPerfEvents(t *testing.T) {
	testutils.RequireRoot(t)
	filter := func(all []string, prefix string) []string {
		var out []string
		for _, l := range all {
			if strings.HasPrefix(l, prefix) {
				out = append(out, l)
			}
		}
		return out
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-l", "software:*"}, softwareListing},
		{[]string{"-l", "s:*"}, softwareListing},
		{[]string{"-lv", "software:*"}, softwareListing},
		{[]string{"-l", "software:"}, softwareListing},
		{[]string{"-l", "hardware:*"}, hardwareListing},
		{[]string{"-l", "h:*"}, hardwareListing},
		{[]string{"-l", "software:cpu*"}, filter(softwareListing, "software:cpu")},
		{[]string{"-l", "hardware:cache-*"}, filter(hardwareListing, "hardware:cache-")},
		{[]string{"-l", "software:cs:"}, []string{"software:cs:"}},
		// The names end in ':', so a pattern must too, or end in '*'.
		{[]string{"-l", "software:cpu-clock"}, nil},
		{[]string{"-l", "software:*:100"}, nil},
	}
	for _, tc := range tests {
		got := listLines(t, harness.Bin(), tc.args...)
		compareLines(t, strings.Join(tc.args, " "), got, tc.want)
	}
}

// TestListTimers lists interval and profile probes. bpftrace 0.17 rejects
// the patterns ("interval probe type requires 2 arguments"); v0.26 lists
// its time units (TIME_UNITS in src/probe_matcher.h), but only for a probe
// type that is named, not one matched by a wildcard.
func TestListTimers(t *testing.T) {
	testutils.RequireRoot(t)
	units := []string{"hz:", "ms:", "s:", "us:"}
	with := func(provider string) []string {
		var out []string
		for _, u := range units {
			out = append(out, provider+":"+u)
		}
		return out
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-l", "interval:*"}, with("interval")},
		{[]string{"-l", "i:*"}, with("interval")},
		{[]string{"-lv", "profile:*"}, with("profile")},
		{[]string{"-l", "profile:hz:"}, []string{"profile:hz:"}},
		{[]string{"-l", "*:hz:"}, nil},
		{[]string{"-l", "int*:*"}, nil},
	}
	for _, tc := range tests {
		got := listLines(t, harness.Bin(), tc.args...)
		compareLines(t, strings.Join(tc.args, " "), got, tc.want)
	}
}

// kallsymsTraceIters returns the tracepoint names the kernel made
// __traceiter_ functions for: every raw tracepoint.
func kallsymsTraceIters(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		if name, ok := strings.CutPrefix(fields[2], "__traceiter_"); ok {
			names[name] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestListRawTracepoints checks raw tracepoints, which bpftrace 0.17 cannot
// list ("Invalid probe type made it to attachpoint parser"), against the
// kernel: v0.26 names them "module:name" after the kernel's __probestub_
// and __traceiter_ functions, leaving out those with more arguments than
// registers.
func TestListRawTracepoints(t *testing.T) {
	testutils.RequireRoot(t)
	iters := kallsymsTraceIters(t)
	if len(iters) == 0 {
		t.Fatal("no __traceiter_ functions in /proc/kallsyms")
	}
	all := listLines(t, harness.Bin(), "-l", "rawtracepoint:*")
	if !slices.IsSorted(all) {
		t.Errorf("rawtracepoint:* is not sorted")
	}
	listed := map[string]bool{}
	for _, l := range all {
		rest, ok := strings.CutPrefix(l, "rawtracepoint:")
		module, name, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || module == "" || name == "" {
			t.Errorf("malformed line %q", l)
			continue
		}
		if module == "vmlinux" && !iters[name] {
			t.Errorf("%s: the kernel has no __traceiter_%s", l, name)
		}
		listed[name] = true
	}
	// Only tracepoints with six or more arguments may be left out (x86-64
	// passes six in registers, one of which holds the context).
	if len(listed) < len(iters)*8/10 {
		t.Errorf("%d raw tracepoints listed, the kernel has %d", len(listed), len(iters))
	}
	for _, name := range []string{"sys_enter", "sys_exit", "sched_switch", "sched_process_exit"} {
		if !listed[name] {
			t.Errorf("rawtracepoint:vmlinux:%s not listed", name)
		}
	}

	// The arguments of TP_PROTO(struct pt_regs *regs, long id) and
	// TP_PROTO(struct pt_regs *regs, long ret) in the kernel's
	// include/trace/events/syscalls.h, as libbpf's btf_dump declares them
	// (BTF names long "long int"). The leading context pointer is left out.
	sysEnter := []string{"rawtracepoint:vmlinux:sys_enter", "    struct pt_regs * regs", "    long int id"}
	sysExit := []string{"rawtracepoint:vmlinux:sys_exit", "    struct pt_regs * regs", "    long int ret"}
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"rawtracepoint:sys_enter", sysEnter},
		{"rt:vmlinux:sys_enter", sysEnter},
		{"rawtracepoint:*:sys_e*", append(slices.Clone(sysEnter), sysExit...)},
	} {
		compareLines(t, "-lv "+tc.pattern, listLines(t, harness.Bin(), "-lv", tc.pattern), tc.want)
	}
	// Without -v, just the names.
	compareLines(t, "-l rt:sys_exit", listLines(t, harness.Bin(), "-l", "rt:sys_exit"), sysExit[:1])
}

// TestListAll lists everything. The tracepoints must be bpftrace 0.17's;
// the providers come in v0.26's order (by name), with the perf events of
// v0.26 where 0.17 prints "hardware:*:" and "software:*:", and v0.26's
// providers: fentry, iter, and kprobe where tracefs or kallsyms lists the
// kernel's functions.
func TestListAll(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	var wantTP []string
	for _, l := range listLines(t, bpftrace, "-l") {
		if strings.HasPrefix(l, "tracepoint:") {
			wantTP = append(wantTP, l)
		}
	}
	got := listLines(t, harness.Bin(), "-l")
	sections := map[string][]string{}
	var order []string
	for _, l := range got {
		provider, _, _ := strings.Cut(l, ":")
		if len(order) == 0 || order[len(order)-1] != provider {
			order = append(order, provider)
		}
		sections[provider] = append(sections[provider], l)
	}
	want := []string{"fentry", "hardware", "iter", "kprobe", "rawtracepoint", "software", "tracepoint"}
	if _, err := kernel.TraceableFunctions(); err != nil {
		want = slices.DeleteFunc(want, func(p string) bool { return p == "kprobe" || p == "fentry" })
	}
	if !slices.Equal(order, want) {
		t.Errorf("providers listed in order %q, want %q", order, want)
	}
	compareLines(t, "-l tracepoints", sections["tracepoint"], wantTP)
	compareLines(t, "-l software", sections["software"], softwareListing)
	compareLines(t, "-l hardware", sections["hardware"], hardwareListing)
	compareLines(t, "-l rawtracepoints", sections["rawtracepoint"], listLines(t, harness.Bin(), "-l", "rawtracepoint:*"))
}

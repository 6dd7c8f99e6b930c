package tools

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// Kernel stacks print as bpftrace prints kstack: a newline, then one line
// per frame, innermost first, each "symbol+offset" in decimal after an
// indentation, and a newline after the last frame. In printf("%s") and
// print() both bpftrace 0.17 and v0.26 indent frames by 8 spaces. In map
// keys 0.17 indents by 4 and v0.26, which gtrace follows, by 8 (it passes
// the same indent of 8 to get_stack for every kstack value: kstack_t in
// src/types_format.cpp). In JSON map keys v0.26 drops every space
// (src/output/json.cpp), so frames are not indented at all; 0.17 keeps its
// 4 spaces.
//
// The workload is harness.DDOneByte: 37 reads of fd 0, all made by dd's copy
// loop, so every event takes the same path through the kernel, and the
// stacks are compared with bpftrace's on the same workload. The innermost
// frames belong to the tracing machinery and vary: perf_syscall_enter when
// the program runs from the perf side of the syscall tracepoints, as
// bpftrace 0.17's does, __bpf_trace_* and bpf_trace_run* from a raw
// tracepoint, and __traceiter_sys_enter whenever more than one probe is
// attached to sys_enter (another tracer, or a test running in parallel),
// instead of a static call straight to the only one. Those frames are left
// out before comparing; from the system call entry outwards, the frames
// and their offsets (return addresses are fixed while the kernel runs)
// must be bpftrace's.

const stackProbe = "tracepoint:syscalls:sys_enter_read /pid == cpid && args->fd == 0/"

var (
	// frameRE is one frame without its indentation.
	frameRE = regexp.MustCompile(`^([A-Za-z_.][A-Za-z0-9_.$]*)\+(\d+)$`)
	// machineryRE names the functions of the tracing machinery that can
	// sit between the traced code and the BPF program, and the program.
	machineryRE = regexp.MustCompile(`^(perf_|__perf_|__traceiter_|__bpf_trace_|bpf_trace_run|trace_call_bpf|__trace_|bpf_prog_)`)
	// progFrameRE is a frame in a BPF program.
	progFrameRE = regexp.MustCompile(`^bpf_prog_`)
	// stackEnd is the end of a map entry keyed by a stack.
	stackEnd = regexp.MustCompile(`^\]: (\d+)$`)
)

// stackEntry is one stack and how often it was seen.
type stackEntry struct {
	frames []string
	count  int
}

// parseStackMap parses text map output of @[kstack] = count() (prefix
// "@[") or @[comm, kstack] (prefix "@[dd, "): the two empty lines of the
// exit, then every entry as prefix, frames indented by indent, "]: N".
func parseStackMap(t *testing.T, out, prefix, indent string) []stackEntry {
	t.Helper()
	body, ok := strings.CutPrefix(harness.StripAttaching(out), "\n\n")
	if !ok {
		t.Fatalf("map output does not start with two empty lines:\n%s", out)
	}
	var (
		entries []stackEntry
		cur     *stackEntry
	)
	for i, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		switch {
		case cur == nil && l == prefix:
			cur = &stackEntry{}
		case cur != nil && stackEnd.MatchString(l):
			cur.count, _ = strconv.Atoi(stackEnd.FindStringSubmatch(l)[1])
			entries = append(entries, *cur)
			cur = nil
		case cur != nil && strings.HasPrefix(l, indent) && frameRE.MatchString(l[len(indent):]):
			cur.frames = append(cur.frames, l[len(indent):])
		default:
			t.Fatalf("line %d: unexpected %q in map output:\n%s", i+3, l, out)
		}
	}
	if cur != nil || len(entries) == 0 {
		t.Fatalf("incomplete map output:\n%s", out)
	}
	return entries
}

// parseStackValues parses the output of one kstack value per event, as
// printf("%s|\n", kstack) (end "|") or print(kstack) (end "", the
// newline print adds) write them: an empty line, frames indented by 8
// spaces, the end line.
func parseStackValues(t *testing.T, out, end string) []stackEntry {
	t.Helper()
	// The two empty lines of the exit follow the last event.
	body, ok := strings.CutSuffix(harness.StripAttaching(out), "\n\n\n")
	if !ok {
		t.Fatalf("output does not end with the two empty lines of the exit:\n%s", out)
	}
	lines := strings.Split(body, "\n")
	var entries []stackEntry
	for i := 0; i < len(lines); {
		if lines[i] != "" {
			t.Fatalf("line %d: %q, want the empty line that starts a stack:\n%s", i+1, lines[i], out)
		}
		e := stackEntry{count: 1}
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "        "); i++ {
			f := lines[i][8:]
			if !frameRE.MatchString(f) {
				t.Fatalf("line %d: %q is not an indented symbol+offset", i+1, lines[i])
			}
			e.frames = append(e.frames, f)
		}
		if i >= len(lines) || lines[i] != end {
			t.Fatalf("stack %d does not end with %q:\n%s", len(entries)+1, end, out)
		}
		i++
		entries = append(entries, e)
	}
	return entries
}

// core drops the innermost frames of the tracing machinery.
func core(frames []string) []string {
	i := 0
	for i < len(frames) && machineryRE.MatchString(frames[i]) {
		i++
	}
	return frames[i:]
}

// byCore returns the counts of entries by the core of their stacks.
func byCore(entries []stackEntry) map[string]int {
	m := map[string]int{}
	for _, e := range entries {
		m[strings.Join(core(e.frames), " <- ")] += e.count
	}
	return m
}

// total adds up the counts of entries.
func total(entries []stackEntry) int {
	n := 0
	for _, e := range entries {
		n += e.count
	}
	return n
}

// kallsyms holds the kernel's code symbols, read independently of gtrace's
// symbolizer.
type kallsyms struct {
	addrs map[string][]uint64 // every address of each code symbol
	all   []uint64            // sorted distinct code addresses
}

func readKallsyms(t *testing.T) *kallsyms {
	t.Helper()
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := &kallsyms{addrs: map[string][]uint64{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !strings.ContainsAny(fields[1], "tTwW") {
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr == 0 {
			continue
		}
		k.addrs[fields[2]] = append(k.addrs[fields[2]], addr)
		k.all = append(k.all, addr)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(k.all) == 0 {
		t.Fatal("no code addresses in /proc/kallsyms")
	}
	slices.Sort(k.all)
	k.all = slices.Compact(k.all)
	return k
}

// checkFrame checks "name+offset" against kallsyms: name is a code
// symbol, and, when it has a single address, the offset stays below the
// next symbol.
func (k *kallsyms) checkFrame(t *testing.T, frame string) {
	t.Helper()
	m := frameRE.FindStringSubmatch(frame)
	if m == nil {
		t.Errorf("frame %q is not symbol+offset", frame)
		return
	}
	addrs := k.addrs[m[1]]
	if len(addrs) == 0 {
		t.Errorf("frame %q: %s is not a code symbol in /proc/kallsyms", frame, m[1])
		return
	}
	if len(addrs) > 1 {
		return
	}
	off, _ := strconv.ParseUint(m[2], 10, 64)
	i := sort.Search(len(k.all), func(i int) bool { return k.all[i] > addrs[0] })
	if i < len(k.all) && addrs[0]+off >= k.all[i] {
		t.Errorf("frame %q: offset runs past the next symbol at %#x", frame, k.all[i])
	}
}

// checkStacks checks gtrace's stacks on their own: the workload's count,
// frames that are kernel code, and a system call entry outside the
// tracing machinery.
func checkStacks(t *testing.T, entries []stackEntry, wantCount int) {
	t.Helper()
	if n := total(entries); n != wantCount {
		t.Errorf("counts add up to %d, want %d", n, wantCount)
	}
	k := readKallsyms(t)
	progStacks := 0
	for _, e := range entries {
		for _, f := range e.frames {
			// bpftrace's stacks for tracepoint probes start where the
			// kernel called the tracepoint, never in the tracer's own
			// program.
			if progFrameRE.MatchString(f) {
				if progStacks++; progStacks == 1 {
					t.Errorf("stack shows a frame of the tracer's BPF program, %q: %q", f, e.frames)
				}
				continue
			}
			k.checkFrame(t, f)
		}
		// x86-64 enters through do_syscall_64, arm64 through
		// invoke_syscall.
		if !slices.ContainsFunc(core(e.frames), func(f string) bool { return strings.Contains(f, "syscall") }) {
			t.Errorf("no system call entry frame in %q", e.frames)
		}
	}
	if progStacks > 1 {
		t.Errorf("%d frames of the tracer's BPF program in all", progStacks)
	}
}

// compareStacks compares gtrace's stacks with bpftrace's by their cores.
func compareStacks(t *testing.T, got, want []stackEntry) {
	t.Helper()
	if n := total(want); n != 37 {
		t.Errorf("bpftrace counts add up to %d, want 37", n)
	}
	if g, w := byCore(got), byCore(want); !reflect.DeepEqual(g, w) {
		t.Errorf("stacks from the system call entry out:\ngtrace   %v\nbpftrace %v", g, w)
	}
}

// runBoth runs script on the dd workload under bpftrace and gtrace with
// extra arguments, and returns their stdout.
func runBoth(t *testing.T, bpftrace, script string, args ...string) (want, got string) {
	t.Helper()
	args = append(args, "-c", harness.DDOneByte, "-e", script)
	w := harness.Run(t, bpftrace, args...)
	if w.Code != 0 {
		t.Fatalf("bpftrace exit code %d, stderr:\n%s", w.Code, w.Stderr)
	}
	g := harness.Gtrace(t, args...)
	if g.Code != 0 {
		t.Fatalf("gtrace exit code %d, stderr:\n%s", g.Code, g.Stderr)
	}
	return w.Stdout, g.Stdout
}

func TestStackMapKey(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	tests := []struct {
		name, script, prefix string
	}{
		{"kstack", stackProbe + " { @[kstack] = count(); }", "@["},
		{"comm and kstack", stackProbe + " { @[comm, kstack] = count(); }", "@[dd, "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, got := runBoth(t, bpftrace, tc.script)
			gotEntries := parseStackMap(t, got, tc.prefix, "        ")
			checkStacks(t, gotEntries, 37)
			compareStacks(t, gotEntries, parseStackMap(t, want, tc.prefix, "    "))
		})
	}
}

// TestStackValue prints kstack as a value, where bpftrace 0.17 and v0.26
// agree: each event prints a newline, the frames indented by 8, and what
// follows %s.
func TestStackValue(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	for _, tc := range []struct{ name, action, end string }{
		{"printf", `printf("%s|\n", kstack);`, "|"},
		{"print", `print(kstack);`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := runBoth(t, bpftrace, stackProbe+" { "+tc.action+" }")
			gotEntries := parseStackValues(t, got, tc.end)
			checkStacks(t, gotEntries, 37)
			compareStacks(t, gotEntries, parseStackValues(t, want, tc.end))
		})
	}
}

// TestStackJSON checks stacks in JSON: as a map key without spaces, and
// as printf data, which is the text of the value.
func TestStackJSON(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)

	want, got := runBoth(t, bpftrace, stackProbe+" { @[kstack] = count(); }", "-f", "json")
	keys := func(out, indent string) []stackEntry {
		for _, l := range strings.Split(out, "\n") {
			var rec struct {
				Type string                    `json:"type"`
				Data map[string]map[string]int `json:"data"`
			}
			if json.Unmarshal([]byte(l), &rec) != nil || rec.Type != "map" {
				continue
			}
			var entries []stackEntry
			for k, n := range rec.Data["@"] {
				e := stackEntry{count: n}
				body, ok := strings.CutPrefix(k, "\n")
				body, ok2 := strings.CutSuffix(body, "\n")
				if !ok || !ok2 {
					t.Errorf("key %q: want a newline, the frames, a newline", k)
				}
				for _, f := range strings.Split(body, "\n") {
					f, ok := strings.CutPrefix(f, indent)
					if !ok || !frameRE.MatchString(f) {
						t.Errorf("key %q: frame %q is not symbol+offset indented by %q", k, f, indent)
					}
					e.frames = append(e.frames, f)
				}
				entries = append(entries, e)
			}
			return entries
		}
		t.Fatalf("no map record in:\n%s", out)
		return nil
	}
	gotEntries := keys(got, "")
	checkStacks(t, gotEntries, 37)
	compareStacks(t, gotEntries, keys(want, "    "))

	want, got = runBoth(t, bpftrace, stackProbe+` { printf("%s|\n", kstack); }`, "-f", "json")
	data := func(out string) []stackEntry {
		var text strings.Builder
		for _, l := range strings.Split(out, "\n") {
			var rec struct {
				Type string `json:"type"`
				Data string `json:"data"`
			}
			if json.Unmarshal([]byte(l), &rec) == nil && rec.Type == "printf" {
				text.WriteString(rec.Data)
			}
		}
		return parseStackValues(t, text.String()+"\n\n", "|")
	}
	gotEntries = data(got)
	checkStacks(t, gotEntries, 37)
	compareStacks(t, gotEntries, data(want))
}

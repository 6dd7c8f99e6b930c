package vm

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gtrace/calltrace"
	"gtrace/internal/testutils"
	"gtrace/internal/vmtest"
)

// The test here runs `gtrace class bio` on direct reads and writes of
// nvme0n1, sizes the block layer does not split, and checks that each
// I/O is one life of one bio that passes through submit_bio and, later,
// bio_endio, with the I/O's sector and size.
//
// On 6.12 every function that takes a struct bio is traced, through
// kprobe.multi links. 6.1 has no kprobe.multi: there gtrace loads and
// attaches an fentry and an fexit program per function, and under the
// emulator the trampolines of all of them take minutes (see
// docs/performance.md), so the test traces the bio_* and submit_bio*
// functions only.

// vmClassWrites and vmClassReads are the sectors of the direct writes of
// 4096 bytes and of the reads of 8192 bytes.
var (
	vmClassWrites = sectorRange(0, 16, 8)
	vmClassReads  = sectorRange(1024, 16, 16)
)

func sectorRange(first, n, step int) []int {
	var out []int
	for i := range n {
		out = append(out, first+i*step)
	}
	return out
}

// vmClassScript traces in the background, waits until it says it is
// tracing, lists its links by type, issues the I/O and stops it.
const vmClassScript = vmShellFuncs + `
/gtrace class bio -v --comm blkio $FUNCS -o /tmp/class.json >/tmp/class.out 2>/tmp/class.err &
pid=$!
i=0
while ! grep -q '^Tracing' /tmp/class.err && [ $i -lt 3000 ]; do
	i=$((i + 1))
	sleep 0.1
done
section links sh -c "grep -h '^link_type:' /proc/$pid/fdinfo/* | sort | uniq -c"
section io sh -c "/blkio write /dev/nvme0n1 4096 $WRITES && /blkio read /dev/nvme0n1 8192 $READS"
stop class $pid
section json cat /tmp/class.json
if [ -n "$TEXT" ]; then
	section text /gtrace class bio --comm blkio -c "/blkio read /dev/nvme0n1 4096 2048"
fi
`

// vmClassAttached is gtrace class -v's line on how it attached.
var vmClassAttached = regexp.MustCompile(`Attached (\d+) functions with (kprobe\.multi|fentry/fexit): (\d+) links; load (\S+), attach (\S+)`)

// vmLinkCount is a line of uniq -c over fdinfo's link_type lines.
var vmLinkCount = regexp.MustCompile(`(?m)^\s*(\d+) link_type:\s*(\S+)$`)

func TestVMClass(t *testing.T) {
	files := map[string]string{
		"/gtrace": vmtest.BuildGtrace(t),
		"/blkio":  buildTestdata(t, "blkio"),
	}
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			env := map[string]string{"WRITES": sectorList(vmClassWrites), "READS": sectorList(vmClassReads)}
			// The text output and -c, once: on 6.1 loading the
			// programs again would take as long as the test.
			if k.Name == "6.12" {
				env["TEXT"] = "1"
			}
			if k.Name == "6.1" {
				env["FUNCS"] = "--funcs=submit_bio*,bio_endio,bio_init,bio_uninit,bio_put"
			}
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: files, Env: env,
				NVMe: true, Timeout: 8 * time.Minute}, vmClassScript)
			sections.get(t, "io", 0)
			stderr := sections.get(t, "class", 0).stderr
			m := vmClassAttached.FindStringSubmatch(stderr)
			if m == nil {
				t.Fatalf("no line on how the functions were attached:\n%s", stderr)
			}
			t.Logf("%s (emulated): %s functions by %s, %s links: load %s, attach %s", k.Name, m[1], m[2], m[3], m[4], m[5])
			checkClassLinks(t, k.Name, m, sections.get(t, "links", 0).stdout)
			checkClassLives(t, sections.get(t, "json", 0).stdout, classSkipped(t, stderr))
			if env["TEXT"] != "" {
				checkClassText(t, sections.get(t, "text", 0).stdout)
			}
		})
	}
}

// checkClassLinks checks that gtrace held the links it says: on 6.12 a
// few kprobe.multi links, on 6.1 an fentry and an fexit link per
// function.
func checkClassLinks(t *testing.T, kernel string, attached []string, links string) {
	t.Helper()
	byType := map[string]int{}
	for _, m := range vmLinkCount.FindAllStringSubmatch(links, -1) {
		n, _ := strconv.Atoi(m[1])
		byType[m[2]] += n
	}
	funcs, _ := strconv.Atoi(attached[1])
	said, _ := strconv.Atoi(attached[3])
	switch kernel {
	case "6.12":
		// One link per argument position and role, and two for returns.
		if attached[2] != "kprobe.multi" || said < 2 || said > 3*5+2 || byType["kprobe_multi"] != said || len(byType) != 1 {
			t.Errorf("gtrace says %s, and holds %v links, want %d kprobe_multi", attached[0], byType, said)
		}
	case "6.1":
		if attached[2] != "fentry/fexit" || said != 2*funcs || byType["tracing"] != 2*funcs || len(byType) != 1 {
			t.Errorf("gtrace says %s, and holds %v links, want %d tracing", attached[0], byType, 2*funcs)
		}
	}
}

// vmClassSkipped is gtrace class's warning of the calls the kernel
// skipped.
var vmClassSkipped = regexp.MustCompile(`WARNING: the kernel skipped (\d+) calls`)

// classSkipped is how many calls gtrace class says the kernel skipped.
func classSkipped(t *testing.T, stderr string) int {
	m := vmClassSkipped.FindStringSubmatch(stderr)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	t.Logf("the kernel skipped %d calls", n)
	return n
}

// checkClassLives checks the recording: it follows the format's rules,
// and has one life per I/O, each with submit_bio and a later bio_endio,
// and the I/O's sector and size at submit_bio. A kprobe that fires while
// another BPF program runs on its CPU is skipped by the kernel, as in an
// interrupt that completes an I/O during a probe, which emulation makes
// likely: each call gtrace says was skipped may leave one life without
// submit_bio or bio_endio, and no more.
func checkClassLives(t *testing.T, file string, skipped int) {
	t.Helper()
	if err := calltrace.Check(strings.NewReader(file)); err != nil {
		t.Fatalf("the recording breaks the Chrome Trace format's rules: %v", err)
	}
	rec, err := calltrace.ReadChrome(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	rec.WriteText(&text)
	t.Logf("recording:\n%s", text.String())
	want := map[string]bool{}
	for _, s := range vmClassWrites {
		want[fmt.Sprintf("%d 4096", s)] = true
	}
	for _, s := range vmClassReads {
		want[fmt.Sprintf("%d 8192", s)] = true
	}
	sector, size := slices.Index(rec.Fields, "bi_iter.bi_sector"), slices.Index(rec.Fields, "bi_iter.bi_size")
	if sector < 0 || size < 0 {
		t.Fatalf("the recording's fields are %v, want bi_iter.bi_sector and bi_iter.bi_size", rec.Fields)
	}
	got := map[string]bool{}
	incomplete := 0
	for _, track := range rec.Tracks {
		var submit, endio *calltrace.Call
		track.Walk(func(c *calltrace.Call, _ int) {
			switch {
			case c.Func == "submit_bio" && submit == nil:
				submit = c
			case c.Func == "bio_endio" && endio == nil:
				endio = c
			}
		})
		if submit == nil || endio == nil || endio.Entry < submit.Entry {
			incomplete++
			if incomplete > skipped {
				t.Errorf("%s: want submit_bio, then bio_endio", track.Name)
			}
			continue
		}
		io := submit.Fields[sector] + " " + submit.Fields[size]
		if !want[io] || got[io] {
			t.Errorf("%s: sector and size %s at submit_bio, not one of the I/Os issued or seen twice", track.Name, io)
		}
		got[io] = true
	}
	if lives := len(rec.Tracks); lives < len(want)-skipped || lives > len(want)+skipped || len(got) < len(want)-skipped {
		t.Errorf("%d lives, %d of the %d I/Os issued, %d calls skipped", lives, len(got), len(want), skipped)
	}
}

// checkClassText checks gtrace class's text output of one direct read
// of 4096 bytes at sector 2048, under -c: one life, with the read's
// sector and size, through submit_bio, bio_endio and bio_uninit.
func checkClassText(t *testing.T, out string) {
	t.Helper()
	if n := strings.Count(out, "\nbio 0x"); n != 0 || !strings.HasPrefix(out, "bio 0x") {
		t.Errorf("want one life, got %d more:\n%s", n, out)
	}
	for _, want := range []string{
		"bi_iter.bi_sector=2048 bi_iter.bi_size=4096",
		" submit_bio() {",
		"} /* submit_bio */",
		"bio_endio()",
		"bio_uninit();",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the text output:\n%s", want, out)
		}
	}
}

// vmClassTimesScript runs gtrace class for a second on each of $CASES,
// "name:struct:funcs" (no funcs for all), and times the whole run from
// /proc/uptime.
const vmClassTimesScript = vmShellFuncs + `
for c in $CASES; do
	name=${c%%:*}
	rest=${c#*:}
	s=${rest%%:*}
	funcs=${rest#*:}
	start=$(cut -d' ' -f1 /proc/uptime)
	/gtrace class $s -v -d 1 ${funcs:+--funcs=$funcs} >/dev/null 2>/tmp/$name.err
	code=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	echo "whole run: $start $end" >>/tmp/$name.err
	: >/tmp/empty
	emit $name $code /tmp/empty /tmp/$name.err
done
`

// vmClassTimesCases are what TestVMClassAttachTimes measures, by kernel:
// name, struct and function patterns. On 6.1 loading and attaching an
// fentry and an fexit program per function takes about a second a
// function under the emulator: it gets subsets.
var vmClassTimesCases = map[string][]string{
	"6.12": {"bio:bio:", "request:request:", "sk_buff:sk_buff:", "sock:sock:"},
	"6.1":  {"bio8:bio:submit_bio*,bio_endio,bio_init,bio_uninit,bio_put", "bio_star:bio:bio_*"},
}

// TestVMClassAttachTimes measures how long gtrace class takes to load
// and attach its programs for more and more functions, on 6.12
// (kprobe.multi) and 6.1 (fentry and fexit per function). It is a
// measurement, not a test: it prints the figures with t.Log and runs
// only with GTRACE_VM_BENCH=1. Unless KVM works, the guests are emulated
// (TCG), many times slower than hardware.
//
//	GTRACE_VM_BENCH=1 go test ./tests/vm -run TestVMClassAttachTimes -v -timeout 60m
func TestVMClassAttachTimes(t *testing.T) {
	testutils.OptIn(t, "GTRACE_VM_BENCH", "a measurement")
	gtrace := vmtest.BuildGtrace(t)
	for _, k := range vmtest.Kernels {
		t.Run(k.Name, func(t *testing.T) {
			cases := vmClassTimesCases[k.Name]
			sections := guestSections(t, vmtest.Config{Kernel: k, Files: map[string]string{"/gtrace": gtrace},
				Env: map[string]string{"CASES": strings.Join(cases, " ")}, Timeout: 45 * time.Minute}, vmClassTimesScript)
			for _, c := range cases {
				name, _, _ := strings.Cut(c, ":")
				stderr := sections.get(t, name, 0).stderr
				m := vmClassAttached.FindStringSubmatch(stderr)
				if m == nil {
					t.Errorf("%s: no line on how the functions were attached:\n%s", name, stderr)
					continue
				}
				t.Logf("%s %s (emulated): %s functions by %s, %s links: load %s, attach %s; %s",
					k.Name, c, m[1], m[2], m[3], m[4], m[5], wholeRun(stderr))
			}
		})
	}
}

// wholeRun is the time between the two /proc/uptime readings of a
// "whole run: START END" line.
func wholeRun(out string) string {
	var start, end float64
	for _, line := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(line, "whole run: %g %g", &start, &end); err == nil {
			return fmt.Sprintf("whole run %.2f s", end-start)
		}
	}
	return "no whole run time"
}

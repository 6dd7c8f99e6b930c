package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gtrace/internal/testutils"
	"gtrace/symbol"
	"gtrace/tests/internal/harness"
)

// usdtMain has USDT probes without semaphores: arguments of 1 to 8 bytes,
// signed and unsigned, a constant, a global (read relative to %rip at
// -O2), and a probe inlined in two places. It writes every value it hands
// a probe to the file named by argv[2], in the order the probes fire.
const usdtMain = `#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

void guarded(FILE *out, int i);
int guard_state(void);

long counter = 5;
struct item { long id; int weight; short tag; };

__attribute__((noinline)) void work(FILE *out, int i, long v, short h, signed char c,
		unsigned char u, struct item *it) {
	DTRACE_PROBE6(gtest, args, i, v, h, c, u, it->weight);
	fprintf(out, "args %d %ld %d %d %u %d\n", i, v, h, c, u, it->weight);
	STAP_PROBE2(gtest, mem, it->id, it->tag);
	fprintf(out, "mem %ld %d\n", it->id, it->tag);
	DTRACE_PROBE1(gtest, konst, -7);
	fprintf(out, "konst -7\n");
	DTRACE_PROBE1(gtest, glob, counter);
	fprintf(out, "glob %ld\n", counter);
}

static inline __attribute__((always_inline)) void twice(FILE *out, int i) {
	DTRACE_PROBE1(gtest, twice, i);
	fprintf(out, "twice %d\n", i);
}

int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	FILE *out = fopen(argv[2], "w");
	struct item it = {100, 7, -3};
	for (int i = 0; i < n; i++) {
		it.id += i * 1000000000L;
		it.weight -= 3;
		it.tag -= 1000;
		counter *= -3;
		work(out, i - 1, -1000L * i, (short)(-300 * i), (signed char)(i - 2), (unsigned char)(250 + i), &it);
		twice(out, i);
		twice(out, i * 10);
		guarded(out, i);
	}
	fprintf(out, "semaphore %d\n", guard_state());
	fclose(out);
	return 0;
}
`

// usdtSema has a probe with a semaphore: it fires, and the program writes
// its line, only while a tracer has raised the semaphore.
const usdtSema = `#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>

__extension__ unsigned short gtest_guarded_semaphore __attribute__((unused)) __attribute__((section(".probes")));

void guarded(FILE *out, int i) {
	if (gtest_guarded_semaphore) {
		DTRACE_PROBE1(gtest, guarded, i);
		fprintf(out, "guarded %d\n", i);
	}
}

int guard_state(void) { return gtest_guarded_semaphore; }
`

// usdtScript prints every probe's arguments as the program writes them
// and counts each probe's hits.
const usdtScript = `usdt:BIN:gtest:args { printf("args %d %ld %d %d %u %d\n", arg0, arg1, arg2, arg3, arg4, arg5); @[probe] = count(); }
usdt:BIN:gtest:mem { printf("mem %ld %d\n", arg0, arg1); @[probe] = count(); }
usdt:BIN:konst { printf("konst %d\n", arg0); @[probe] = count(); }
usdt:BIN:gtest:twice { printf("twice %d\n", arg0); @[probe] = count(); }
U:BIN:gtest:guarded { printf("guarded %d\n", arg0); @[probe] = count(); }
`

// usdtGlob reads the global, which gcc -O2 hands the probe as
// counter(%rip); bpftrace 0.17 cannot read that operand.
const usdtGlob = `usdt:BIN:gtest:glob { printf("glob %ld\n", arg0); @[probe] = count(); }
`

// buildUsdtProgram builds usdtMain and usdtSema at an optimization level
// and checks that gcc wrote the operand kinds the test is for.
func buildUsdtProgram(t *testing.T, opt string) string {
	t.Helper()
	bin := harness.BuildC(t, "prog", map[string]string{"main.c": usdtMain, "sema.c": usdtSema}, opt)
	probes, err := symbol.USDTProbes(bin)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[symbol.USDTArgKind]bool{}
	for _, p := range probes {
		if p.ArgsErr != nil {
			t.Fatalf("%s: %v", p.Name, p.ArgsErr)
		}
		for _, a := range p.Arguments {
			kinds[a.Kind] = true
		}
	}
	if !kinds[symbol.USDTReg] || !kinds[symbol.USDTMem] || !kinds[symbol.USDTConst] {
		t.Fatalf("gcc %s wrote no register, memory or constant operand: %+v", opt, probes)
	}
	return bin
}

// usdtRun runs tracer on the program with n iterations and returns its
// result and what the program wrote.
func usdtRun(t *testing.T, tracer, bin, script string, n int) (harness.Result, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "values")
	script = strings.ReplaceAll(script, "BIN", bin)
	r := harness.Run(t, tracer, "-c", fmt.Sprintf("%s %d %s", bin, n, out), "-e", script)
	if r.Code != 0 {
		t.Fatalf("%s exit code %d\nstdout:\n%s\nstderr:\n%s", tracer, r.Code, r.Stdout, r.Stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return r, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// printed splits a tracer's stdout into the lines its printf wrote and
// the map lines printed at exit.
func printed(stdout string) (lines, maps []string) {
	for _, l := range strings.Split(harness.StripAttaching(stdout), "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "@"):
			maps = append(maps, l)
		default:
			lines = append(lines, l)
		}
	}
	return lines, maps
}

// TestUsdt traces a program built with gcc -O0 (arguments on the stack)
// and -O2 (arguments in registers of every width, memory at a register,
// a global through %rip, an inlined probe copied twice), and checks each
// value against what the program itself wrote, and each probe's count.
func TestUsdt(t *testing.T) {
	testutils.RequireRoot(t)
	const n = 4
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			bin := buildUsdtProgram(t, opt)
			r, values := usdtRun(t, harness.Bin(), bin, usdtScript+usdtGlob, n)
			if last := values[len(values)-1]; last != "semaphore 1" {
				t.Errorf("the program saw %q while traced, want the semaphore raised", last)
			}
			lines, maps := printed(r.Stdout)
			if want := values[:len(values)-1]; !slices.Equal(lines, want) {
				t.Errorf("gtrace printed:\n%s\nthe program wrote:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
			var wantMaps []string
			for _, p := range []struct {
				name  string
				count int
			}{{"args", n}, {"glob", n}, {"guarded", n}, {"konst", n}, {"mem", n}, {"twice", 2 * n}} {
				wantMaps = append(wantMaps, fmt.Sprintf("@[usdt:%s:gtest:%s]: %d", bin, p.name, p.count))
			}
			slices.Sort(maps)
			slices.Sort(wantMaps)
			if !slices.Equal(maps, wantMaps) {
				t.Errorf("maps:\n%s\nwant:\n%s", strings.Join(maps, "\n"), strings.Join(wantMaps, "\n"))
			}
			// As current bpftrace counts them: twice's two sites are one probe.
			if !strings.Contains(r.Stderr, "Attached 6 probes\n") {
				t.Errorf("want 6 probes attached:\n%s", r.Stderr)
			}
		})
	}
}

// usdtSites counts the sites of the probes usdtScript traces in bin.
func usdtSites(t *testing.T, bin string) int {
	t.Helper()
	sites, err := symbol.USDTProbes(bin)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range sites {
		if strings.Contains(usdtScript, ":"+s.Name+" {") {
			n++
		}
	}
	return n
}

// TestUsdtUntraced checks the program's own view when nothing traces it:
// the semaphore is down and the guarded code does not run.
func TestUsdtUntraced(t *testing.T) {
	bin := buildUsdtProgram(t, "-O2")
	out := filepath.Join(t.TempDir(), "values")
	if b, err := exec.Command(bin, "2", out).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "guarded") || !strings.HasSuffix(s, "semaphore 0\n") {
		t.Errorf("untraced program wrote:\n%s", s)
	}
}

// TestUsdtDifferential runs the same script under bpftrace 0.17 and
// gtrace on the same binaries and compares their output.
func TestUsdtDifferential(t *testing.T) {
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			bin := buildUsdtProgram(t, opt)
			want, wantValues := usdtRun(t, bpftrace, bin, usdtScript, 3)
			got, gotValues := usdtRun(t, harness.Bin(), bin, usdtScript, 3)
			if !slices.Equal(wantValues, gotValues) {
				t.Errorf("the program wrote under bpftrace:\n%s\nunder gtrace:\n%s",
					strings.Join(wantValues, "\n"), strings.Join(gotValues, "\n"))
			}
			wantLines, wantMaps := printed(want.Stdout)
			gotLines, gotMaps := printed(got.Stdout)
			if !slices.Contains(wantLines, "guarded 2") {
				t.Fatalf("bpftrace printed no guarded probe:\n%s\nstderr:\n%s", want.Stdout, want.Stderr)
			}
			// bpftrace orders map entries with equal counts at random.
			slices.Sort(wantMaps)
			slices.Sort(gotMaps)
			if !slices.Equal(wantLines, gotLines) || !slices.Equal(wantMaps, gotMaps) {
				t.Errorf("bpftrace:\n%s\ngtrace:\n%s", want.Stdout, got.Stdout)
			}
			// bpftrace 0.17 counts the sites it attaches to, gtrace the
			// probes, as current bpftrace does.
			if a, b := harness.AttachCount(want.Stdout), harness.AttachCount(got.Stderr); a != usdtSites(t, bin) || b != 5 {
				t.Errorf("bpftrace attached %d probes, want %d sites; gtrace %d, want 5", a, usdtSites(t, bin), b)
			}
		})
	}
}

// TestUsdtList lists the program's probes as bpftrace does.
func TestUsdtList(t *testing.T) {
	bin := buildUsdtProgram(t, "-O2")
	all := []string{"args", "glob", "guarded", "konst", "mem", "twice"}
	tests := []struct {
		pattern string
		want    []string
	}{
		{"usdt:BIN:*", all},
		{"U:BIN:*", all},
		{"usdt:BIN:gtest:*", all},
		{"usdt:BIN:*:g*", []string{"glob", "guarded"}},
		{"usdt:BIN:twice", []string{"twice"}},
		{"usdt:BIN:gtest:twice", []string{"twice"}},
		{"usdt:BIN:nope:*", nil},
		{"*:BIN:*", all},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			pattern := strings.ReplaceAll(tt.pattern, "BIN", bin)
			r := harness.Gtrace(t, "-l", pattern)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			var want string
			for _, name := range tt.want {
				want += "usdt:" + bin + ":gtest:" + name + "\n"
			}
			got := strings.Join(slices.DeleteFunc(strings.SplitAfter(r.Stdout, "\n"), func(l string) bool {
				return !strings.HasPrefix(l, "usdt:")
			}), "")
			if got != want {
				t.Errorf("gtrace -l %s:\n%s\nwant:\n%s", pattern, got, want)
			}
		})
	}
	// The same as bpftrace 0.17, run in the binary's directory so that
	// both take the relative path as written.
	testutils.RequireRoot(t)
	bpftrace := harness.RequireBpftrace(t)
	for _, pattern := range []string{"usdt:./prog:*", "usdt:./prog:gtest:t*", "usdt:./prog:twice"} {
		cmd := exec.Command(bpftrace, "-l", pattern)
		cmd.Dir = filepath.Dir(bin)
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("bpftrace -l %s: %v", pattern, err)
		}
		cmd = exec.Command(harness.Bin(), "-l", pattern)
		cmd.Dir = filepath.Dir(bin)
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("gtrace -l %s: %v", pattern, err)
		}
		if string(got) != string(want) || len(want) == 0 {
			t.Errorf("-l %s: bpftrace:\n%s\ngtrace:\n%s", pattern, want, got)
		}
	}
}

// usdtTicker has a probe with a semaphore in a loop that reports the
// semaphore's value every 50ms, for a tracer to come and go.
const usdtTicker = `#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <unistd.h>
#include <sys/sdt.h>

__extension__ unsigned short gtest_tick_semaphore __attribute__((unused)) __attribute__((section(".probes")));

int main(void) {
	for (int i = 0; i < 400; i++) {
		printf("%d\n", gtest_tick_semaphore);
		fflush(stdout);
		if (gtest_tick_semaphore)
			DTRACE_PROBE1(gtest, tick, i);
		usleep(50000);
	}
	return 0;
}
`

// TestUsdtSemaphoreKill attaches to a running process with -p and kills
// gtrace with SIGKILL: the kernel, which raised the semaphore, lowers it
// again, so the program does not go on paying for a tracer that is gone.
func TestUsdtSemaphoreKill(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "prog", map[string]string{"tick.c": usdtTicker}, "-O2")
	// The program prints its semaphore on every line.
	semaphore := func(want string) func(string) bool {
		return func(l string) bool { return l == want }
	}
	prog := exec.Command(bin)
	reports := harness.StartWait(t, prog, harness.Stdout, semaphore("0"), nil)
	defer prog.Process.Kill()

	tracer := exec.Command(harness.Bin(), "-p", fmt.Sprint(prog.Process.Pid),
		"-e", "usdt:"+bin+":gtest:tick { printf(\"tick %d\\n\", arg0); }")
	var tracerOut strings.Builder
	tracer.Stdout = &tracerOut
	if err := tracer.Start(); err != nil {
		t.Fatal(err)
	}
	harness.WaitLine(t, reports, semaphore("1"))
	time.Sleep(200 * time.Millisecond)
	if err := tracer.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	tracer.Wait()
	harness.WaitLine(t, reports, semaphore("0"))
	if !strings.Contains(tracerOut.String(), "tick ") {
		t.Errorf("gtrace printed no tick while attached:\n%s", tracerOut.String())
	}
}

// referenceProgram is the C++ example of the reference document on
// tracing with BPF, scaled down to run in a moment: 10 calls of
// calculate() instead of a million, over 10,000 entries instead of ten
// million.
const referenceProgram = `#include <iostream>
#include <unordered_map>
#include <random>
#include <sys/sdt.h>

std::unordered_map<int, std::string> glob;
std::mt19937_64 rand_mt;

void calculate() {
	size_t i = 0;
	while (i++ < 1000) {
		size_t index = rand_mt() % 20'000;
		if (index < 10'000) {
			DTRACE_PROBE(test, first_probe);
			std::cout << glob[index] << "\n";
			DTRACE_PROBE(test, first_probe_done);
		}
	}
}

void loop() {
	size_t i = 0;
	while (i++ < 10) {
		calculate();
	}
}

int main(int argc, char **argv) {
	for (size_t i = 0; i < 10'000; i++) {
		glob.insert({i, std::to_string(i)});
	}
	loop();
	return 0;
}
`

// referenceScript is the document's example.bt as it is: calculate is the
// C++ function, whose symbol is _Z9calculatev.
const referenceScript = `// example.bt
uprobe:./test:calculate {
    // register to thread id. So will work if the same thread completes the task. 
    @start[tid] = nsecs; 
} 
uretprobe:./test:calculate { 
    $cmdtime = nsecs - @start[tid];
     @avg_calc["calc avg"] = avg($cmdtime);
}
usdt:./test:first_probe {
    @startprint[tid] = nsecs;
}
usdt:./test:first_probe_done {
    $cmdtime = nsecs - @startprint[tid];
    @avg_calc_print["calc print avg"] = avg($cmdtime);
}
`

// TestUsdtReferenceExample runs the reference document's example.bt on
// its C++ program, then counts the usdt probes' hits against the lines
// the program prints, also on the program built stripped (g++ -s), whose
// notes survive.
func TestUsdtReferenceExample(t *testing.T) {
	testutils.RequireRoot(t)
	for _, flags := range [][]string{{"-O0"}, {"-O0", "-s"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			bin := harness.BuildC(t, "prog", map[string]string{"test.cc": referenceProgram}, flags...)
			printedNumbers := func(stdout string) int {
				n := 0
				for _, l := range strings.Split(stdout, "\n") {
					if l != "" && strings.Trim(l, "0123456789") == "" {
						n++
					}
				}
				return n
			}
			if !slices.Contains(flags, "-s") {
				script := strings.ReplaceAll(referenceScript, "./test", bin)
				r := harness.Run(t, harness.Bin(), "-c", bin, "-e", script)
				if r.Code != 0 {
					t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
				}
				if !strings.Contains(r.Stderr, "Attached 4 probes\n") {
					t.Errorf("want 4 probes attached:\n%s", r.Stderr)
				}
				for _, want := range []string{"\n@avg_calc[calc avg]: ",
					"\n@avg_calc_print[calc print avg]: ", "\n@start[", "\n@startprint["} {
					if !strings.Contains(r.Stdout, want) {
						t.Errorf("no %q in:\n%s", want, stripNumbers(r.Stdout))
					}
				}
				if printedNumbers(r.Stdout) == 0 {
					t.Errorf("the program printed nothing")
				}
			}
			script := strings.ReplaceAll(`usdt:./test:first_probe { @first = count(); }
usdt:./test:test:first_probe_done { @done = count(); }`, "./test", bin)
			r := harness.Run(t, harness.Bin(), "-c", bin, "-e", script)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			n := printedNumbers(r.Stdout)
			for _, m := range []string{"@first", "@done"} {
				if want := fmt.Sprintf("\n%s: %d\n", m, n); n == 0 || !strings.Contains(r.Stdout, want) {
					t.Errorf("want %q, the program's %d lines:\n%s", want, n, stripNumbers(r.Stdout))
				}
			}
		})
	}
}

// stripNumbers drops the lines of digits that the reference program prints.
func stripNumbers(s string) string {
	var kept []string
	for _, l := range strings.Split(s, "\n") {
		if l == "" || strings.Trim(l, "0123456789") != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

package tools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestUstack symbolizes user stacks and usym() in a program built with
// frame pointers, and checks uaddr() against the program's own symbol.
func TestUstack(t *testing.T) {
	testutils.RequireRoot(t)
	bin := harness.BuildC(t, "ustack", map[string]string{"ustack.c": harness.LeafProgram}, "-O1", "-fno-omit-frame-pointer", "-no-pie")
	script := `uprobe:` + bin + `:leaf /pid == cpid/ { @s[ustack] = count(); @f[usym(arg0)] = count(); @a = uaddr("counter"); }`
	r := harness.Gtrace(t, "-c", bin, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	out := harness.MapOutput(r.Stdout)
	for _, want := range []string{"\n        leaf+0\n        middle+", "\n        main+", "]: 5\n", "@f[target]: 5\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	nm, err := exec.Command("nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(nm), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[2] == "counter" {
			if want := "@a: 0x" + strings.TrimLeft(f[0], "0") + "\n"; !strings.Contains(out, want) {
				t.Errorf("missing %q in:\n%s", want, out)
			}
		}
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// cppProgram calls a free function and a method a known number of times.
const cppProgram = `
#include <cstdio>
#include <unistd.h>
namespace ns { struct C { __attribute__((noinline)) int f(int x) { return x * 2; } }; }
__attribute__((noinline)) void calculate() { static volatile int n; n++; }
int main() { ns::C c; int s = 0; for (int i = 0; i < 7; i++) { calculate(); s += c.f(i); } printf("%d\n", s); usleep(200000); return 0; }
`

// TestCppUprobes attaches to C++ functions by their names in the source,
// by demangled patterns with cpp:, and checks that a stripped binary's
// missing symbol is named in the error.
func TestCppUprobes(t *testing.T) {
	testutils.RequireRoot(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.cc")
	if err := writeFile(src, cppProgram); err != nil {
		t.Fatal(err)
	}
	bin, stripped := filepath.Join(dir, "prog"), filepath.Join(dir, "stripped")
	for _, b := range [][]string{{"-o", bin}, {"-s", "-o", stripped}} {
		if out, err := exec.Command("g++", append([]string{"-O1", src}, b...)...).CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, out)
		}
	}
	script := `uprobe:` + bin + `:calculate { @calc = count(); }
		uprobe:` + bin + `:cpp:"ns::C::f" { @f[probe] = count(); }
		uretprobe:` + bin + `:cpp:ns::C::f { @ret = sum(retval); }
		uprobe:` + bin + `:cpp:*calc* { @wild = count(); }`
	r := harness.Gtrace(t, "-c", bin, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "42\n\n\n@calc: 7\n@f[uprobe:" + bin + ":cpp:ns::C::f]: 7\n@ret: 42\n@wild: 7\n"
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	r = harness.Gtrace(t, "-c", stripped, "-e", `uprobe:`+stripped+`:calculate { @ = count(); }`)
	if r.Code == 0 || !strings.Contains(r.Stderr, ":calculate. ") {
		t.Errorf("want an error naming the missing symbol, got exit %d:\n%s", r.Code, r.Stderr)
	}
}

// goProgram calls main.work nine times through main.outer.
const goProgram = `package main

import (
	"fmt"
	"time"
)

//go:noinline
func work(n int) int { return n * 3 }

//go:noinline
func outer(n int) int { return work(n) + 1 }

func main() {
	time.Sleep(200 * time.Millisecond)
	s := 0
	for i := 0; i < 9; i++ {
		s += outer(i)
	}
	fmt.Println(s)
	time.Sleep(200 * time.Millisecond)
}
`

// TestGoUprobe attaches to a Go program's function and symbolizes its
// stack. At a function's first instruction its frame is not set up yet,
// so frame pointers lead from it straight to its caller's caller, as
// with any tracer that walks them.
func TestGoUprobe(t *testing.T) {
	testutils.RequireRoot(t)
	dir := t.TempDir()
	if err := writeFile(filepath.Join(dir, "main.go"), goProgram); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "go.mod"), "module goprog\n\ngo 1.22\n"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "goprog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := harness.Gtrace(t, "-c", bin, "-e",
		`config = { show_debug_info = 0 } uprobe:`+bin+`:main.work { @s[ustack(3)] = count(); @n = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	out := harness.MapOutput(r.Stdout)
	for _, want := range []string{"117\n", "\n        main.work+0\n        main.main+", "\n        runtime.main+", "]: 9\n", "@n: 9\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// TestUprobeForms attaches to one function by name, name+offset, its
// address in a PIE and in a non-PIE program, and a wildcard.
func TestUprobeForms(t *testing.T) {
	testutils.RequireRoot(t)
	for _, pie := range []string{"-pie", "-no-pie"} {
		t.Run(pie, func(t *testing.T) {
			bin := harness.BuildC(t, "forms", map[string]string{"forms.c": harness.LeafProgram}, "-O1", pie)
			nm, err := exec.Command("nm", bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			var addr string
			for _, line := range strings.Split(string(nm), "\n") {
				if f := strings.Fields(line); len(f) == 3 && f[2] == "leaf" {
					addr = "0x" + strings.TrimLeft(f[0], "0")
				}
			}
			if addr == "" {
				t.Fatalf("no leaf in nm output:\n%s", nm)
			}
			script := `uprobe:` + bin + `:leaf { @name = count(); }
				uprobe:` + bin + `:leaf+0 { @offset = count(); }
				uprobe:` + bin + `:` + addr + ` { @addr = count(); }
				uprobe:` + bin + `:lea* { @wild[probe] = count(); }`
			r := harness.Gtrace(t, "-c", bin, "-e", script)
			if r.Code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
			}
			want := "@addr: 5\n@name: 5\n@offset: 5\n@wild[uprobe:" + bin + ":leaf]: 5\n"
			if got := harness.MapOutput(r.Stdout); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestUprobePid attaches with -p to one of two processes running the
// same program: only its calls count, and gtrace exits with it.
func TestUprobePid(t *testing.T) {
	testutils.RequireRoot(t)
	src := strings.Replace(harness.LeafProgram, "usleep(300000); int s", "usleep(1500000); int s", 1)
	bin := harness.BuildC(t, "pidprog", map[string]string{"pidprog.c": src}, "-O1")
	var procs []*exec.Cmd
	for i := 0; i < 2; i++ {
		cmd := exec.Command(bin)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		procs = append(procs, cmd)
	}
	pid := fmt.Sprint(procs[0].Process.Pid)
	r := harness.Gtrace(t, "-p", pid, "-e", `uprobe:`+bin+`:leaf { @[pid] = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got, want := harness.MapOutput(r.Stdout), "@["+pid+"]: 5\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

package symbol

import (
	"gtrace/internal/testutils"

	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// progC prints the addresses of its functions, then dlopens each library
// named on stdin and prints the address of its plugin_work. It exits at
// the end of stdin.
const progC = `#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WITH_LIB
int lib_work(int n);
#endif

int prog_work(int n) {
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i * 3;
	return s;
}

static int prog_local(int n) {
	volatile int s = 1;
	for (int i = 0; i < n; i++)
		s *= 3;
	return s;
}

static void show(const char *name, void *addr) { printf("%s %p\n", name, addr); }

int main(void) {
	show("main", (void *)main);
	show("prog_work", (void *)prog_work);
	show("prog_local", (void *)prog_local);
#ifdef WITH_LIB
	show("lib_work", (void *)lib_work);
#endif
	show("heap", malloc(64));
	puts("end");
	fflush(stdout);
	char line[4096];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\n")] = 0;
		void *h = dlopen(line, RTLD_NOW);
		show("plugin_work", h ? dlsym(h, "plugin_work") : NULL);
		puts("end");
		fflush(stdout);
	}
	return prog_work(3) + prog_local(2);
}
`

const libC = `int lib_work(int n) {
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i * 5;
	return s;
}
`

const pluginC = `int plugin_work(int n) {
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i * 7;
	return s;
}
`

const progCXX = `#include <cstdio>

namespace tracee {
struct Widget {
	static int make(int n);
};
int Widget::make(int n) {
	volatile int s = n;
	return s * 2;
}
int twice(int n, const char *why) {
	volatile int s = n;
	return s * 2 + (why != nullptr);
}
template <typename T> T add(T a, T b) {
	volatile T s = a;
	return s + b;
}
} // namespace tracee

int main() {
	std::printf("make %p\n", (void *)&tracee::Widget::make);
	std::printf("twice %p\n", (void *)&tracee::twice);
	std::printf("add %p\n", (void *)&tracee::add<long>);
	std::puts("end");
	std::fflush(stdout);
	char line[64];
	while (std::fgets(line, sizeof line, stdin)) {
	}
	return tracee::Widget::make(1) + tracee::twice(2, "x") + (int)tracee::add<long>(1, 2);
}
`

// programs are the test tracees, built by buildPrograms.
type programs struct {
	dir                string
	pie, noPIE, libPIE string // executables
	lib, plugin        string // shared libraries
}

// buildPrograms compiles the C tracees with gcc.
func buildPrograms(tb testing.TB) programs {
	tb.Helper()
	requireTool(tb, "gcc")
	dir := tb.TempDir()
	p := programs{
		dir:    dir,
		pie:    filepath.Join(dir, "pie"),
		noPIE:  filepath.Join(dir, "nopie"),
		libPIE: filepath.Join(dir, "withlib"),
		lib:    filepath.Join(dir, "libwork.so"),
		plugin: filepath.Join(dir, "libplugin.so"),
	}
	for name, src := range map[string]string{"prog.c": progC, "lib.c": libC, "plugin.c": pluginC} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	// With GNU ld's usual layout a file offset of code equals its virtual
	// address; -Ttext-segment links the plugin at a nonzero base, so that
	// the two differ and Resolve must go through the program headers.
	// (It would turn a PIE into ET_EXEC.)
	compile(tb, dir, "gcc", "-O0", "-fPIC", "-shared", "-o", p.lib, "lib.c")
	compile(tb, dir, "gcc", "-O0", "-fPIC", "-shared", "-Wl,-Ttext-segment=0x400000", "-o", p.plugin, "plugin.c")
	compile(tb, dir, "gcc", "-O0", "-fPIE", "-pie", "-o", p.pie, "prog.c", "-ldl")
	compile(tb, dir, "gcc", "-O0", "-fno-pie", "-no-pie", "-o", p.noPIE, "prog.c", "-ldl")
	compile(tb, dir, "gcc", "-O0", "-fPIE", "-pie", "-DWITH_LIB", "-o", p.libPIE, "prog.c",
		"-L"+dir, "-lwork", "-Wl,-rpath,"+dir, "-ldl")
	return p
}

// requireTool skips tb, or fails it under CI, when a program is missing.
func requireTool(tb testing.TB, name string) {
	tb.Helper()
	if _, err := exec.LookPath(name); err != nil {
		testutils.Skip(tb, fmt.Sprintf("%s is not installed; it builds the programs that user-space symbolization is tested on", name))
	}
}

func compile(tb testing.TB, dir, compiler string, args ...string) {
	tb.Helper()
	cmd := exec.Command(compiler, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, out)
	}
}

// tracee is a running test program.
type tracee struct {
	cmd   *exec.Cmd
	pid   uint32
	path  string            // the executable, symlinks resolved as /proc/PID/maps shows it
	addrs map[string]uint64 // what the program printed
	stdin io.WriteCloser
	out   *bufio.Reader
}

// start runs path and reads the addresses it prints. The program is
// killed when the test ends.
func start(tb testing.TB, path string) *tracee {
	tb.Helper()
	cmd := exec.Command(path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", path, err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	t := &tracee{
		cmd:   cmd,
		pid:   uint32(cmd.Process.Pid),
		path:  realPath(tb, path),
		addrs: map[string]uint64{},
		stdin: stdin,
		out:   bufio.NewReader(stdout),
	}
	t.readAddrs(tb)
	return t
}

// readAddrs reads "name 0xaddr" lines up to "end".
func (t *tracee) readAddrs(tb testing.TB) {
	tb.Helper()
	for {
		line, err := t.out.ReadString('\n')
		if err != nil {
			tb.Fatalf("read from tracee %d: %v", t.pid, err)
		}
		line = strings.TrimSpace(line)
		if line == "end" {
			return
		}
		name, hexAddr, _ := strings.Cut(line, " ")
		addr, err := strconv.ParseUint(strings.TrimPrefix(hexAddr, "0x"), 16, 64)
		if err != nil {
			tb.Fatalf("tracee %d printed %q: %v", t.pid, line, err)
		}
		t.addrs[name] = addr
	}
}

// addr returns the printed address of name.
func (t *tracee) addr(tb testing.TB, name string) uint64 {
	tb.Helper()
	addr, ok := t.addrs[name]
	if !ok || addr == 0 {
		tb.Fatalf("tracee %d printed no address for %s", t.pid, name)
	}
	return addr
}

func realPath(tb testing.TB, path string) string {
	tb.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func elfType(t *testing.T, path string) elf.Type {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Type
}

func TestUserC(t *testing.T) {
	p := buildPrograms(t)
	if typ := elfType(t, p.pie); typ != elf.ET_DYN {
		t.Fatalf("%s is %v, want a PIE (ET_DYN)", p.pie, typ)
	}
	if typ := elfType(t, p.libPIE); typ != elf.ET_DYN {
		t.Fatalf("%s is %v, want a PIE (ET_DYN)", p.libPIE, typ)
	}
	if typ := elfType(t, p.noPIE); typ != elf.ET_EXEC {
		t.Fatalf("%s is %v, want ET_EXEC", p.noPIE, typ)
	}
	procs := map[string]*tracee{
		"pie":     start(t, p.pie),
		"nopie":   start(t, p.noPIE),
		"withlib": start(t, p.libPIE),
	}
	lib := realPath(t, p.lib)

	var u User
	tests := []struct {
		proc, sym string
		off       uint64
		module    string // "" for the program itself
	}{
		{"pie", "main", 0, ""},
		{"pie", "prog_work", 0, ""},
		{"pie", "prog_work", 5, ""},
		{"pie", "prog_local", 3, ""}, // static: only in .symtab
		{"nopie", "main", 1, ""},
		{"nopie", "prog_work", 0, ""},
		{"nopie", "prog_local", 7, ""},
		{"withlib", "main", 2, ""},
		{"withlib", "lib_work", 0, lib},
		{"withlib", "lib_work", 9, lib},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s+%d", tt.proc, tt.sym, tt.off), func(t *testing.T) {
			tr := procs[tt.proc]
			addr := tr.addr(t, tt.sym) + tt.off
			name, off, ok := u.Resolve(tr.pid, addr)
			if name != tt.sym || off != tt.off || !ok {
				t.Errorf("Resolve(%#x) = %q, %d, %v; want %q, %d, true", addr, name, off, ok, tt.sym, tt.off)
			}
			want := tt.module
			if want == "" {
				want = tr.path
			}
			if got := u.Module(tr.pid, addr); got != want {
				t.Errorf("Module(%#x) = %q, want %q", addr, got, want)
			}
		})
	}

	// Not code of any file: the heap, the zero page, the top of memory.
	tr := procs["pie"]
	for _, addr := range []uint64{tr.addr(t, "heap"), 0, 0x10, ^uint64(0)} {
		if name, off, ok := u.Resolve(tr.pid, addr); ok {
			t.Errorf("Resolve(%#x) = %q, %d, true; want not ok", addr, name, off)
		}
		if got := u.Module(tr.pid, addr); got != "" {
			t.Errorf("Module(%#x) = %q, want \"\"", addr, got)
		}
	}
}

// TestUserLaterLibrary resolves a library that the process loads after
// its maps were first read.
func TestUserLaterLibrary(t *testing.T) {
	p := buildPrograms(t)
	tr := start(t, p.pie)
	var u User
	if name, _, ok := u.Resolve(tr.pid, tr.addr(t, "main")); name != "main" || !ok {
		t.Fatalf("Resolve(main) = %q, %v", name, ok)
	}

	fmt.Fprintln(tr.stdin, p.plugin)
	tr.readAddrs(t)
	addr := tr.addr(t, "plugin_work") + 4
	if name, off, ok := u.Resolve(tr.pid, addr); name != "plugin_work" || off != 4 || !ok {
		t.Errorf("Resolve(plugin_work+4) = %q, %d, %v; want plugin_work, 4, true", name, off, ok)
	}
	if got, want := u.Module(tr.pid, addr), realPath(t, p.plugin); got != want {
		t.Errorf("Module(plugin_work+4) = %q, want %q", got, want)
	}
}

// TestUserExited resolves addresses of a process after it has exited,
// from what was cached while it ran.
func TestUserExited(t *testing.T) {
	p := buildPrograms(t)
	tr := start(t, p.pie)
	work := tr.addr(t, "prog_work") + 2
	var u User
	check := func(when string) {
		t.Helper()
		if name, off, ok := u.Resolve(tr.pid, work); name != "prog_work" || off != 2 || !ok {
			t.Errorf("%s: Resolve(prog_work+2) = %q, %d, %v", when, name, off, ok)
		}
		if got := u.Module(tr.pid, work); got != tr.path {
			t.Errorf("%s: Module(prog_work+2) = %q, want %q", when, got, tr.path)
		}
	}
	check("running")

	// A zombie's maps file is empty; an unknown address makes User read it.
	if err := tr.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitZombie(t, tr.pid)
	if _, _, ok := u.Resolve(tr.pid, 0x10); ok {
		t.Error("Resolve(0x10) of a zombie is ok")
	}
	check("zombie")

	// Reaped, its /proc directory is gone.
	tr.cmd.Wait()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", tr.pid)); err == nil {
		t.Logf("pid %d was reused already", tr.pid)
	}
	u.Resolve(tr.pid, 0x10)
	check("reaped")

	var fresh User
	if name, _, ok := fresh.Resolve(tr.pid, work); ok {
		t.Errorf("a new User resolved prog_work of an exited process to %q", name)
	}
	if got := fresh.Module(tr.pid, work); got != "" {
		t.Errorf("a new User's Module = %q for an exited process", got)
	}
}

// TestUserReplacedFile resolves a program whose file was deleted and
// replaced by another one while it ran, as a rebuild does. Only root can
// open the deleted file, through /proc/PID/map_files.
func TestUserReplacedFile(t *testing.T) {
	testutils.RequireRoot(t)
	p := buildPrograms(t)
	bin := filepath.Join(t.TempDir(), "replaced")
	copyFile(t, p.pie, bin)
	tr := start(t, bin)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	copyFile(t, p.noPIE, bin)

	var u User
	addr := tr.addr(t, "prog_local") + 1
	if name, off, ok := u.Resolve(tr.pid, addr); name != "prog_local" || off != 1 || !ok {
		t.Errorf("Resolve(prog_local+1) = %q, %d, %v; want prog_local, 1, true", name, off, ok)
	}
	if got := u.Module(tr.pid, addr); got != tr.path {
		t.Errorf("Module(prog_local+1) = %q, want %q", got, tr.path)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// waitZombie waits until pid has exited but is not yet reaped.
func waitZombie(t *testing.T, pid uint32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// "pid (comm) state ..."; comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		if strings.HasPrefix(strings.TrimSpace(rest), "Z") {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not become a zombie", pid)
}

func TestUserCPlusPlus(t *testing.T) {
	requireTool(t, "g++")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog.cc"), []byte(progCXX), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cxx")
	compile(t, dir, "g++", "-O0", "-o", bin, "prog.cc")
	tr := start(t, bin)

	var u User
	tests := []struct {
		sym, want string
	}{
		{"make", "tracee::Widget::make(int)"},
		{"twice", "tracee::twice(int, char const*)"},
		{"add", "long tracee::add<long>(long, long)"},
	}
	for _, tt := range tests {
		addr := tr.addr(t, tt.sym) + 1
		if name, off, ok := u.Resolve(tr.pid, addr); name != tt.want || off != 1 || !ok {
			t.Errorf("Resolve(%s+1) = %q, %d, %v; want %q, 1, true", tt.sym, name, off, ok, tt.want)
		}
	}
}

// goTarget is a function of this test binary to resolve.
//
//go:noinline
func goTarget(n int) int {
	s := 0
	for i := range n {
		s += i * i
	}
	return s
}

func TestUserGo(t *testing.T) {
	self := uint32(os.Getpid())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe = realPath(t, exe)

	var u User
	funcs := []struct {
		fn   any
		want string
	}{
		{goTarget, "gtrace/symbol.goTarget"},
		{TestUserGo, "gtrace/symbol.TestUserGo"},
		{strings.Cut, "strings.Cut"},
		{(*User).Resolve, "gtrace/symbol.(*User).Resolve"},
	}
	for _, tt := range funcs {
		entry := uint64(reflect.ValueOf(tt.fn).Pointer())
		for _, off := range []uint64{0, 3} {
			if name, got, ok := u.Resolve(self, entry+off); name != tt.want || got != off || !ok {
				t.Errorf("Resolve(%s+%d) = %q, %d, %v; want %q, %d, true", tt.want, off, name, got, ok, tt.want, off)
			}
		}
		if got := u.Module(self, entry); got != exe {
			t.Errorf("Module(%s) = %q, want %q", tt.want, got, exe)
		}
	}

	// Return addresses on this goroutine's stack, as ustack sees them,
	// with testing.tRunner among them.
	pcs := make([]uintptr, 32)
	pcs = pcs[:runtime.Callers(1, pcs)]
	var sawRunner bool
	for _, pc := range pcs {
		fn := runtime.FuncForPC(pc)
		if fn == nil {
			continue
		}
		name, off, ok := u.Resolve(self, uint64(pc))
		if !ok || off != uint64(pc-fn.Entry()) {
			t.Errorf("Resolve(%#x) = %q, %d, %v; runtime says %s+%d", pc, name, off, ok, fn.Name(), pc-fn.Entry())
		}
		sawRunner = sawRunner || name == "testing.tRunner"
	}
	if !sawRunner {
		t.Errorf("testing.tRunner is not among the resolved callers %v", pcs)
	}
}

// goProg prints the addresses of two of its functions, then waits for
// stdin to close.
const goProg = `package main

import (
	"fmt"
	"io"
	"os"
	"reflect"
)

//go:noinline
func work(n int) int {
	s := 0
	for i := range n {
		s += i * i
	}
	return s
}

func main() {
	fmt.Printf("main.main %#x\n", reflect.ValueOf(main).Pointer())
	fmt.Printf("main.work %#x\n", reflect.ValueOf(work).Pointer())
	fmt.Println("end")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(work(1))
}
`

// TestUserGoBuilds resolves Go programs built the usual ways: with a
// symbol table or stripped to their .gopclntab, PIE or not.
func TestUserGoBuilds(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if _, err := os.Stat(goTool); err != nil {
		testutils.Skip(t, "the go command is not in PATH nor GOROOT/bin")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goProg), 0o644); err != nil {
		t.Fatal(err)
	}
	builds := []struct {
		name       string
		args       []string
		typ        elf.Type
		wantSymtab bool
	}{
		{"exe", nil, elf.ET_EXEC, true},
		{"exe-stripped", []string{"-ldflags=-s -w"}, elf.ET_EXEC, false},
		{"pie", []string{"-buildmode=pie"}, elf.ET_DYN, true},
		{"pie-stripped", []string{"-buildmode=pie", "-ldflags=-s -w"}, elf.ET_DYN, false},
	}
	var u User
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			bin := filepath.Join(dir, b.name)
			args := append(append([]string{"build", "-o", bin}, b.args...), "main.go")
			compile(t, dir, goTool, args...)
			ef, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			hasSymtab := ef.Section(".symtab") != nil
			ef.Close()
			if ef.Type != b.typ || hasSymtab != b.wantSymtab {
				t.Fatalf("%s is %v with .symtab %v; want %v, %v", bin, ef.Type, hasSymtab, b.typ, b.wantSymtab)
			}
			tr := start(t, bin)
			for _, sym := range []string{"main.main", "main.work"} {
				addr := tr.addr(t, sym) + 2
				if name, off, ok := u.Resolve(tr.pid, addr); name != sym || off != 2 || !ok {
					t.Errorf("Resolve(%s+2) = %q, %d, %v", sym, name, off, ok)
				}
				if got := u.Module(tr.pid, addr); got != tr.path {
					t.Errorf("Module(%s+2) = %q, want %q", sym, got, tr.path)
				}
			}
		})
	}
}

// TestUserVDSO resolves a function of the vDSO in this process and in
// another one.
func TestUserVDSO(t *testing.T) {
	base, value := vdsoFunction(t, uint32(os.Getpid()), "__vdso_clock_gettime")
	var u User
	if name, off, ok := u.Resolve(uint32(os.Getpid()), base+value+3); name != "__vdso_clock_gettime" || off != 3 || !ok {
		t.Errorf("Resolve(__vdso_clock_gettime+3) = %q, %d, %v", name, off, ok)
	}

	p := buildPrograms(t)
	tr := start(t, p.pie)
	other, _ := vdsoFunction(t, tr.pid, "")
	if name, off, ok := u.Resolve(tr.pid, other+value); name != "__vdso_clock_gettime" || off != 0 || !ok {
		t.Errorf("Resolve(__vdso_clock_gettime) in process %d = %q, %d, %v", tr.pid, name, off, ok)
	}
	if got := u.Module(tr.pid, other+value); got != "" {
		t.Errorf("Module([vdso]) = %q, want \"\"", got)
	}
}

// vdsoFunction returns where pid maps the vDSO and, when name is not "",
// the value of that symbol in this process's vDSO.
func vdsoFunction(t *testing.T, pid uint32, name string) (base, value uint64) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	var end uint64
	for line := range strings.Lines(string(data)) {
		if strings.HasSuffix(line, "[vdso]\n") {
			fmt.Sscanf(line, "%x-%x", &base, &end)
		}
	}
	if base == 0 {
		testutils.Skip(t, fmt.Sprintf("process %d maps no vDSO", pid))
	}
	if name == "" {
		return base, 0
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	ef, err := elf.NewFile(io.NewSectionReader(mem, int64(base), int64(end-base)))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return base, s.Value
		}
	}
	testutils.Skip(t, "the vDSO has no "+name)
	return 0, 0
}

func TestUserConcurrent(t *testing.T) {
	p := buildPrograms(t)
	procs := []*tracee{start(t, p.pie), start(t, p.noPIE), start(t, p.libPIE)}
	var u User
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				tr := procs[(g+i)%len(procs)]
				off := uint64(i % 4)
				if name, got, ok := u.Resolve(tr.pid, tr.addrs["prog_work"]+off); name != "prog_work" || got != off || !ok {
					errs <- fmt.Sprintf("Resolve(prog_work+%d) in %d = %q, %d, %v", off, tr.pid, name, got, ok)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestParseMaps(t *testing.T) {
	const maps = `55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1234 /tmp/my prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1234 /tmp/my prog
55d0c1e4e000-55d0c1e6f000 rw-p 00000000 00:00 0                          [heap]
7f2c1a028000-7f2c1a1bd000 r-xp 00028000 fd:01 1314                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f2c1a300000-7f2c1a301000 r-xp 00000000 00:2a 99 /tmp/old.so (deleted)
7f2c1a400000-7f2c1a401000 rw-p 00000000 00:00 0 
7ffd5a3f0000-7ffd5a3f2000 r-xp 00000000 00:00 0                          [vdso]
`
	got, err := parseMaps(maps)
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{
		{start: 0x55d0c0a00000, end: 0x55d0c0a01000, dev: "fd:01", inode: 1234, path: "/tmp/my prog"},
		{start: 0x55d0c0a01000, end: 0x55d0c0a02000, offset: 0x1000, exec: true, dev: "fd:01", inode: 1234, path: "/tmp/my prog"},
		{start: 0x55d0c1e4e000, end: 0x55d0c1e6f000, dev: "00:00", path: "[heap]"},
		{start: 0x7f2c1a028000, end: 0x7f2c1a1bd000, offset: 0x28000, exec: true, dev: "fd:01", inode: 1314, path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{start: 0x7f2c1a300000, end: 0x7f2c1a301000, exec: true, dev: "00:2a", inode: 99, path: "/tmp/old.so"},
		{start: 0x7f2c1a400000, end: 0x7f2c1a401000, dev: "00:00"},
		{start: 0x7ffd5a3f0000, end: 0x7ffd5a3f2000, exec: true, dev: "00:00", path: "[vdso]"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMaps =\n%+v\nwant\n%+v", got, want)
	}

	for _, bad := range []string{"zz-10 r-xp 0 00:00 0\n", "10 r-xp 0 00:00 0\n", "10-20 r 0 00:00 0\n", "10-20 r-xp 0 00:00 x\n"} {
		if _, err := parseMaps(bad); err == nil {
			t.Errorf("parseMaps(%q) succeeded", bad)
		}
	}
}

func TestLookup(t *testing.T) {
	var f objFile
	f.setSymbols([]rawSym{
		{usym{start: 0x1000, size: 0x10, name: "first"}, elf.STB_GLOBAL},
		{usym{start: 0x1020, size: 0x40, name: "outer"}, elf.STB_GLOBAL},
		{usym{start: 0x1030, size: 0x8, name: "inner"}, elf.STB_LOCAL},
		{usym{start: 0x1080, size: 0, name: "nosize"}, elf.STB_GLOBAL},
		{usym{start: 0x1100, size: 0x10, name: "__libc_malloc"}, elf.STB_GLOBAL},
		{usym{start: 0x1100, size: 0x10, name: "malloc"}, elf.STB_GLOBAL},
		{usym{start: 0x1100, size: 0x10, name: "malloc_local"}, elf.STB_LOCAL},
		{usym{start: 0x1200, size: 0, name: "marker"}, elf.STB_LOCAL},
		{usym{start: 0x1200, size: 0x10, name: "sized"}, elf.STB_LOCAL},
		{usym{start: 0x1300, size: 0x10, name: "weak"}, elf.STB_WEAK},
		{usym{start: 0x1300, size: 0x10, name: "global"}, elf.STB_GLOBAL},
		{usym{start: 0x1400, size: 0x10, name: "_ZN6tracee5twiceEiPKc"}, elf.STB_GLOBAL},
	})
	tests := []struct {
		addr   uint64
		name   string
		offset uint64
		ok     bool
	}{
		{0xfff, "", 0, false},
		{0x1000, "first", 0, true},
		{0x100f, "first", 0xf, true},
		{0x1010, "", 0, false}, // past first's end
		{0x1028, "outer", 8, true},
		{0x1031, "inner", 1, true},
		{0x1038, "outer", 0x18, true}, // past inner, still in outer
		{0x1060, "", 0, false},
		{0x10f0, "nosize", 0x70, true}, // no size: the nearest symbol below
		{0x1104, "malloc", 4, true},
		{0x1201, "sized", 1, true},
		{0x1300, "global", 0, true},
		{0x1402, "tracee::twice(int, char const*)", 2, true},
		{0x1410, "", 0, false},
	}
	for _, tt := range tests {
		i, ok := f.lookup(tt.addr)
		var name string
		var off uint64
		if ok {
			name, off = f.name(i), tt.addr-f.syms[i].start
		}
		if name != tt.name || off != tt.offset || ok != tt.ok {
			t.Errorf("lookup(%#x) = %q, %#x, %v; want %q, %#x, %v", tt.addr, name, off, ok, tt.name, tt.offset, tt.ok)
		}
	}
}

func TestBuildID(t *testing.T) {
	note := func(name string, typ byte, desc []byte) []byte {
		pad := func(b []byte) []byte {
			for len(b)%4 != 0 {
				b = append(b, 0)
			}
			return b
		}
		b := []byte{byte(len(name)), 0, 0, 0, byte(len(desc)), 0, 0, 0, typ, 0, 0, 0}
		b = append(b, pad([]byte(name))...)
		return append(b, pad(desc)...)
	}
	id := []byte{0xab, 0xcd, 0xef, 0x01, 0x23}
	notes := append(note("GNU\x00", 1, []byte{1, 2, 3, 4}), note("GNU\x00", 3, id)...)
	if got := buildID(notes); !reflect.DeepEqual(got, id) {
		t.Errorf("buildID = %x, want %x", got, id)
	}
	if got := buildID(notes[:len(notes)-4]); got != nil {
		t.Errorf("buildID(truncated) = %x, want nil", got)
	}
}

// BenchmarkUserResolve resolves 1000 addresses spread over three C
// processes and this one, with everything cached, as stacks printed at
// exit are.
func BenchmarkUserResolve(b *testing.B) {
	addrs := benchAddrs(b)
	var u User
	for _, a := range addrs {
		if _, _, ok := u.Resolve(a.pid, a.addr); !ok {
			b.Fatalf("Resolve(%d, %#x) failed", a.pid, a.addr)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range addrs {
			u.Resolve(a.pid, a.addr)
		}
	}
}

// BenchmarkUserResolveCold is the same with a new User each time, so it
// reads every process's maps and every file's symbols.
func BenchmarkUserResolveCold(b *testing.B) {
	addrs := benchAddrs(b)
	b.ReportAllocs()
	for b.Loop() {
		var u User
		for _, a := range addrs {
			u.Resolve(a.pid, a.addr)
		}
	}
}

type pidAddr struct {
	pid  uint32
	addr uint64
}

func benchAddrs(b *testing.B) []pidAddr {
	p := buildPrograms(b)
	var funcs []pidAddr
	for _, path := range []string{p.pie, p.noPIE, p.libPIE} {
		tr := start(b, path)
		for name, addr := range tr.addrs {
			if name != "heap" {
				funcs = append(funcs, pidAddr{tr.pid, addr})
			}
		}
	}
	for _, fn := range []any{goTarget, strings.Cut, (*User).Resolve, fmt.Sprintf} {
		funcs = append(funcs, pidAddr{uint32(os.Getpid()), uint64(reflect.ValueOf(fn).Pointer())})
	}
	addrs := make([]pidAddr, 1000)
	for i := range addrs {
		fn := funcs[i%len(funcs)]
		addrs[i] = pidAddr{fn.pid, fn.addr + uint64(i%8)}
	}
	return addrs
}

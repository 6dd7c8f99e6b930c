package reliability

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"gtrace/internal/testutils"
	"gtrace/sema"
	"gtrace/tests/internal/harness"
)

// The reliability tests of the project's issue, against the running
// kernel: no leftovers after kill -9, exact map-full counts, bounded
// shutdown under a flood of events, unsafe builtins refused before
// anything is loaded, and missing capabilities named up front. Lost-event
// accounting is in lost_test.go.

// gtraceProgName matches the names codegen gives gtrace's programs. Other
// packages' tests may run gtrace or bpftrace at the same time, so a
// program is taken for a dead gtrace's by its name, by being new, and by
// no live process holding it.
var gtraceProgName = regexp.MustCompile(`^(p\d+|sys_enter|sys_exit)$`)

// Maps are listed by id and never opened. Opening a map by id takes a
// user reference even from a map whose last one is gone: closing it
// again, while the kernel's deferred clearing of a dead gtrace's program
// array (prog_array_map_clear, a bpf_map_inc then schedule_work) is still
// pending, takes a second map reference that the one run of the work
// never drops, and the array stays forever. An early version of this
// test leaked one so. A new map is taken for a dead gtrace's when no live
// process holds it and no live program uses it.

// bpfIDs is a snapshot of the kernel's BPF object ids.
type bpfIDs struct {
	progs map[ebpf.ProgramID]bool
	maps  map[ebpf.MapID]bool
	links map[link.ID]bool
}

func listIDs() (bpfIDs, error) {
	ids := bpfIDs{progs: map[ebpf.ProgramID]bool{}, maps: map[ebpf.MapID]bool{}}
	for id := ebpf.ProgramID(0); ; {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return ids, fmt.Errorf("program ids: %w", err)
		}
		id = next
		ids.progs[id] = true
	}
	for id := ebpf.MapID(0); ; {
		next, err := ebpf.MapGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return ids, fmt.Errorf("map ids: %w", err)
		}
		id = next
		ids.maps[id] = true
	}
	links, err := harness.Links()
	ids.links = links
	return ids, err
}

// progInfo returns the name of program id and the maps it uses, or ok
// false if it is gone.
func progInfo(id ebpf.ProgramID) (name string, maps []ebpf.MapID, ok bool) {
	p, err := ebpf.NewProgramFromID(id)
	if err != nil {
		return "", nil, false
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return "", nil, false
	}
	maps, _ = info.MapIDs()
	return info.Name, maps, true
}

// heldObjects returns the BPF objects that live processes hold a file
// descriptor to, from /proc/*/fdinfo, as "prog 12", "map 3", "link 5";
// a link's fdinfo also names its program.
func heldObjects() map[string]bool {
	held := map[string]bool{}
	files, _ := filepath.Glob("/proc/[0-9]*/fdinfo/*")
	for _, f := range files {
		for k := range fdObjects(f) {
			held[k] = true
		}
	}
	return held
}

// fdObjects returns the BPF objects named in one fdinfo file.
func fdObjects(path string) map[string]bool {
	objs := map[string]bool{}
	b, err := os.ReadFile(path)
	if err != nil {
		return objs
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "prog_id", "map_id", "link_id":
			objs[strings.TrimSuffix(k, "_id")+" "+strings.TrimSpace(v)] = true
		}
	}
	return objs
}

// sysState is what a run of gtrace might leave behind: BPF object ids,
// tracefs probe definitions and pins.
type sysState struct {
	ids     bpfIDs
	tracefs map[string]bool // "file: line"
	pins    map[string]bool
}

func takeState(t *testing.T) sysState {
	t.Helper()
	ids, err := listIDs()
	if err != nil {
		t.Fatal(err)
	}
	return sysState{ids: ids, tracefs: tracefsProbes(), pins: bpfPins()}
}

// tracefsProbes returns the kprobe and uprobe definitions in tracefs.
func tracefsProbes() map[string]bool {
	probes := map[string]bool{}
	for _, name := range []string{"kprobe_events", "uprobe_events", "dynamic_events"} {
		b, err := os.ReadFile(filepath.Join("/sys/kernel/tracing", name))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line != "" {
				probes[name+": "+line] = true
			}
		}
	}
	return probes
}

// bpfPins returns every path under /sys/fs/bpf.
func bpfPins() map[string]bool {
	pins := map[string]bool{}
	filepath.WalkDir("/sys/fs/bpf", func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != "/sys/fs/bpf" {
			pins[path] = true
		}
		return nil
	})
	return pins
}

// leftovers lists what exists now and not in before and may be a dead
// gtrace's: programs and links of programs named as gtrace names them,
// and maps, that no live process holds (a map: nor any live program
// uses), tracefs probes and pins.
func leftovers(t *testing.T, before sysState) []string {
	t.Helper()
	ids, err := listIDs()
	if err != nil {
		t.Fatal(err)
	}
	held := heldObjects()
	var left []string
	used := map[ebpf.MapID]bool{}
	names := map[ebpf.ProgramID]string{}
	for id := range ids.progs {
		if before.ids.progs[id] {
			continue
		}
		name, maps, ok := progInfo(id)
		if !ok {
			continue
		}
		names[id] = name
		for _, m := range maps {
			used[m] = true
		}
		if gtraceProgName.MatchString(name) && !held[fmt.Sprintf("prog %d", id)] {
			left = append(left, fmt.Sprintf("program %d %s", id, name))
		}
	}
	for id := range ids.maps {
		if !before.ids.maps[id] && !used[id] && !held[fmt.Sprintf("map %d", id)] {
			left = append(left, fmt.Sprintf("map %d", id))
		}
	}
	for id := range ids.links {
		if before.ids.links[id] || held[fmt.Sprintf("link %d", id)] {
			continue
		}
		if prog, ok := harness.LinkProgram(id); ok && gtraceProgName.MatchString(names[prog]) {
			left = append(left, fmt.Sprintf("link %d of program %d %s", id, prog, names[prog]))
		}
	}
	for p := range tracefsProbes() {
		if !before.tracefs[p] {
			left = append(left, "tracefs "+p)
		}
	}
	for p := range bpfPins() {
		if !before.pins[p] {
			left = append(left, "pin "+p)
		}
	}
	return left
}

// waitNoLeftovers polls until nothing of a dead gtrace remains, as the
// kernel frees programs and maps asynchronously once the process is gone,
// and returns how long that took.
func waitNoLeftovers(t *testing.T, before sysState, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		left := leftovers(t, before)
		if len(left) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("still there %v after gtrace was reaped:\n%s", within, strings.Join(left, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesWith returns the live (not zombie) processes that have arg in
// their command line.
func processesWith(arg string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a != arg {
				continue
			}
			stat, err := os.ReadFile(filepath.Join(d, "stat"))
			if err != nil || isZombie(string(stat)) {
				break
			}
			found = append(found, filepath.Base(d)+": "+strings.ReplaceAll(string(b), "\x00", " "))
			break
		}
	}
	return found
}

// isZombie reports whether a /proc/PID/stat line is a zombie's: the state
// follows the command name in parentheses.
func isZombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && strings.HasPrefix(stat[i+1:], " Z")
}

// libcPath finds the C library, for a uprobe.
func libcPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{
		"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6",
		"/lib64/libc.so.6", "/usr/lib64/libc.so.6",
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	testutils.Skip(t, "no libc.so.6 found for a uprobe")
	return ""
}

// privateLibc copies the C library for a uprobe that no other process
// sees: a test that kills gtrace must never risk leaving a breakpoint in
// every process of the machine (keeper.go in the runtime says how that
// can happen). TestDetachLeavesNothing checks the traced side.
func privateLibc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(libcPath(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "libc.so.6")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// killScript attaches many probes of every kind gtrace attaches: about 350
// syscall programs fused behind two raw_syscalls links, sched tracepoints
// and an uprobe as perf-event links, and profile's per-CPU perf events.
const killScript = `tracepoint:syscalls:sys_enter_* { @enter[probe] = count(); }
tracepoint:syscalls:sys_exit_read { @exit = count(); }
tracepoint:sched:sched_process_* { @sched[probe] = count(); }
profile:hz:99 { @ticks = count(); }
uprobe:%s:getpid { @getpid = count(); }
`

// killRuns is how many times TestReliabilityKill9 kills gtrace.
const killRuns = 100

// loadedLine is in what gtrace -v prints once every program is loaded,
// before it attaches any.
const loadedLine = " instructions, verifier "

// TestReliabilityKill9 kills gtrace with SIGKILL at random moments, from
// its start to a little after a full attach, and checks that every time
// no BPF program, map or link of it remains, nor a tracefs probe, a pin or
// its -c child.
func TestReliabilityKill9(t *testing.T) {
	testutils.RequireRoot(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "many.bt")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(killScript, privateLibc(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	// The -c child marks that gtrace let it go, which it does once every
	// probe is attached, then sleeps for a duration unique to the run, by
	// which it is found.
	child := harness.WriteScript(t, "child.sh", `touch "$1"; exec sleep "$2"`)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	type run struct {
		delay time.Duration
		child bool
	}
	var cleanup time.Duration // the longest wait for the kernel to free all
	kill := func(i int, r run) (phase string) {
		before := takeState(t)
		flag := filepath.Join(dir, fmt.Sprintf("attached-%d", i))
		marker := fmt.Sprintf("%d.%09d", 3000+i, rng.IntN(1e9))
		args := []string{"-v", script}
		if r.child {
			args = []string{"-v", "-c", fmt.Sprintf("%s %s %s", child, flag, marker), script}
		}
		out, err := os.Create(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		cmd := exec.Command(harness.Bin(), args...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(r.delay)
		cmd.Process.Kill()
		cmd.Wait()
		b, _ := os.ReadFile(out.Name())
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("run %d: gtrace exited before it was killed:\n%s", i, b)
		}
		harness.CheckNoPanic(t, string(b))
		// Without -c, a kill after loading may fall during or after the
		// attach.
		phase = "loading"
		if _, err := os.Stat(flag); err == nil {
			phase = "attached"
		} else if strings.Contains(string(b), loadedLine) && r.child {
			phase = "attaching"
		} else if strings.Contains(string(b), loadedLine) {
			phase = "loaded (no -c)"
		}
		cleanup = max(cleanup, waitNoLeftovers(t, before, 30*time.Second))
		if r.child {
			deadline := time.Now().Add(10 * time.Second)
			for p := processesWith(marker); len(p) > 0; p = processesWith(marker) {
				if time.Now().After(deadline) {
					t.Fatalf("run %d: the -c child outlived the killed gtrace: %s", i, p)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return phase
	}

	// Loading ends when gtrace -v prints what the verifier did with each
	// program, attaching when it lets the -c child go; both vary from run
	// to run, and the median of three runs is taken.
	var loads, attaches []time.Duration
	for i := range 3 {
		flag := filepath.Join(dir, fmt.Sprintf("calibrate-%d", i))
		out := filepath.Join(dir, fmt.Sprintf("calibrate-%d.out", i))
		before := takeState(t)
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(harness.Bin(), "-v", "-c", child+" "+flag+" 3600", script)
		cmd.Stdout, cmd.Stderr = f, f
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		loaded := time.Duration(0)
		for {
			if b, _ := os.ReadFile(out); loaded == 0 && strings.Contains(string(b), loadedLine) {
				loaded = time.Since(start)
			}
			if _, err := os.Stat(flag); err == nil {
				break
			}
			if time.Since(start) > 60*time.Second {
				cmd.Process.Kill()
				cmd.Wait()
				b, _ := os.ReadFile(out)
				t.Fatalf("gtrace did not attach within 60 s:\n%s", b)
			}
			time.Sleep(time.Millisecond)
		}
		loads, attaches = append(loads, loaded), append(attaches, time.Since(start))
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
		waitNoLeftovers(t, before, 30*time.Second)
	}
	slices.Sort(loads)
	slices.Sort(attaches)
	load, attach := loads[1], attaches[1]
	t.Logf("loading takes %v, a full attach %v (medians of %v and %v)", load, attach, loads, attaches)

	// Half the kills fall anywhere from the start to a little after a full
	// attach, half around the attach.
	start := time.Now()
	phases := map[string]int{}
	for i := range killRuns {
		lo, hi := time.Duration(0), attach*5/4
		if i%2 == 1 {
			lo, hi = load*9/10, attach*11/10
		}
		r := run{delay: lo + time.Duration(rng.Int64N(int64(hi-lo)+1)), child: i%4 >= 2}
		phases[kill(i, r)]++
		if t.Failed() {
			t.Fatalf("run %d, killed after %v", i, r.delay)
		}
	}
	t.Logf("%d kills in %v, killed while %v; all freed at most %v after gtrace was reaped",
		killRuns, time.Since(start).Round(time.Millisecond), phases, cleanup.Round(time.Millisecond))
}

// TestReliabilityMapFull fills a map of max_map_keys = K entries with M
// distinct keys: exactly M-K updates are refused and reported, and the
// map printed at exit holds exactly K entries.
func TestReliabilityMapFull(t *testing.T) {
	testutils.RequireRoot(t)
	const keys, distinct = 64, 250
	want := fmt.Sprintf("WARNING: Map full; can't update element (@full: %d updates refused). "+
		"Try increasing max_map_keys config or manually setting the max entries in a map declaration e.g. `let @full = hash(5000)`\n", distinct-keys)
	entry := regexp.MustCompile(`(?m)^@full\[\d+\]: \d+$`)

	// zero, read by the test itself, is the workload of the tracepoint
	// case: reads of 1 to distinct bytes, each count a key. ready is read
	// until the probes answer, so that every counted read is traced.
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	ready, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer ready.Close()
	reads := fmt.Sprintf(`tracepoint:syscalls:sys_enter_read /pid == %d && args.fd == %d/ { @full[args.count] = count(); }
tracepoint:syscalls:sys_enter_read /pid == %d && args.fd == %d/ { printf("ready\n"); }`,
		os.Getpid(), zero.Fd(), os.Getpid(), ready.Fd())

	tests := []struct {
		name, script string
		env          string // BPFTRACE_MAX_MAP_KEYS, or "" for the config
		traced       bool   // the test drives the reads
	}{
		{"BEGIN loop, assignment", fmt.Sprintf(`config = { max_map_keys = %d }
BEGIN { for ($i : 0..%d) { @full[$i] = 1; } exit(); }`, keys, distinct), "", false},
		{"BEGIN loop, per-CPU count", fmt.Sprintf(`BEGIN { for ($i : 0..%d) { @full[$i] = count(); } exit(); }`, distinct),
			strconv.Itoa(keys), false},
		{"read sizes", reads, strconv.Itoa(keys), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(harness.Bin(), "-e", tt.script)
			if tt.env != "" {
				cmd.Env = append(os.Environ(), "BPFTRACE_MAX_MAP_KEYS="+tt.env)
			}
			var r harness.Result
			if tt.traced {
				r = runDriven(t, cmd, func() {
					buf := make([]byte, distinct)
					for n := 1; n <= distinct; n++ {
						if _, err := zero.Read(buf[:n]); err != nil {
							t.Fatal(err)
						}
					}
				}, ready)
			} else {
				r = harness.RunCmd(t, cmd, 30*time.Second)
			}
			if r.Code != 0 {
				t.Fatalf("exit code %d\nstderr:\n%s", r.Code, r.Stderr)
			}
			if got := strings.Count(r.Stderr, "Map full"); got != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("stderr does not warn once with\n%s\ngot:\n%s", want, r.Stderr)
			}
			if n := len(entry.FindAllString(r.Stdout, -1)); n != keys {
				t.Errorf("@full printed with %d entries, want %d:\n%s", n, keys, r.Stdout)
			}
		})
	}
}

// runDriven starts cmd, reads its stdout until the script prints
// "ready", reading ready meanwhile to make the probe that prints it fire,
// then runs work, stops gtrace with SIGINT and returns what it printed.
func runDriven(t *testing.T, cmd *exec.Cmd, work func(), ready *os.File) harness.Result {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	var b [1]byte
	lines := harness.StartWait(t, cmd, harness.Stdout, isReady, func() { ready.Read(b[:]) })
	defer cmd.Process.Kill()
	var out strings.Builder
	work()
	cmd.Process.Signal(syscall.SIGINT)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				r := harness.Result{Stdout: out.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
				harness.CheckNoPanic(t, r.Stderr)
				return r
			}
			if !isReady(l) {
				out.WriteString(l + "\n")
			}
		case <-timeout:
			t.Fatalf("gtrace did not exit within 30 s of SIGINT\nstderr:\n%s", stderr.String())
		}
	}
}

// isReady tells whether line is the "ready" that a script prints once
// its probes fire.
func isReady(line string) bool {
	return line == "ready"
}

// floodScript prints a line for every read of its -c dd, which reads one
// byte at a time: events come faster than gtrace can print them.
const floodScript = `tracepoint:syscalls:sys_enter_read /pid == cpid/ { printf("read %d\n", args.count); @reads = count(); }
profile:hz:999 { @ticks = count(); }`

// flood is a running gtrace whose stdout the test reads, or stops reading.
type flood struct {
	cmd    *exec.Cmd
	start  time.Time
	stderr *strings.Builder
	exited chan struct{} // closed when gtrace has exited
	eof    chan struct{} // closed when stdout is closed, or no longer read

	mu    sync.Mutex
	lines int    // lines read so far
	tail  []byte // the last bytes read
}

// startFlood starts cmd and waits for its first line. With stall, it then stops reading stdout,
// which it keeps open until gtrace exits.
func startFlood(t *testing.T, cmd *exec.Cmd, stall bool) *flood {
	t.Helper()
	f := &flood{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{}), eof: make(chan struct{})}
	cmd.Stderr = f.stderr
	f.start = time.Now()
	started := func(string) bool { return true }
	lines := harness.StartWait(t, cmd, harness.Stdout, started, nil)
	go func() {
		cmd.Wait()
		close(f.exited)
	}()
	go func() {
		defer close(f.eof)
		if stall {
			<-f.exited
			go harness.Drain(lines)
			return
		}
		for l := range lines {
			f.mu.Lock()
			f.lines++
			f.tail = append(f.tail, l+"\n"...)
			if len(f.tail) > 1<<16 {
				f.tail = f.tail[len(f.tail)-1<<15:]
			}
			f.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-f.exited
	})
	return f
}

// interrupt sends SIGINT and returns when it was sent.
func (f *flood) interrupt(t *testing.T) time.Time {
	t.Helper()
	if err := f.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// waitExit waits for gtrace to exit and returns how long after since it
// did. It gives up, failing, 10 s after limit.
func (f *flood) waitExit(t *testing.T, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case <-f.exited:
		return time.Since(since)
	case <-time.After(time.Until(since.Add(limit + 10*time.Second))):
		t.Fatalf("gtrace still runs %v after SIGINT\nstderr:\n%s", limit+10*time.Second, f.stderr.String())
		return 0
	}
}

// children returns the pids of the processes whose parent is pid.
func children(pid int) []int {
	var kids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// After the name: state, then the parent's pid.
		fields := strings.Fields(s[i+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			kid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
			kids = append(kids, kid)
		}
	}
	return kids
}

// waitGone waits until none of pids is alive (a zombie is not).
func waitGone(t *testing.T, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, pid := range pids {
		for {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil || isZombie(string(stat)) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("child %d of gtrace still alive %v after gtrace exited", pid, within)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestReliabilitySigintFlood stops gtrace with SIGINT while events flood
// in: it must exit within 2 s, as the issue asks, having printed its maps;
// also with the many probes of TestReliabilityKill9 to detach.
func TestReliabilitySigintFlood(t *testing.T) {
	testutils.RequireRoot(t)
	const limit = 2 * time.Second
	tests := []struct {
		name, script string
		maps         []string
	}{
		{"flood", floodScript, []string{"@reads", "@ticks"}},
		{"flood and many probes", floodScript + "\n" + fmt.Sprintf(killScript, privateLibc(t)), []string{"@reads", "@ticks", "@enter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFlood(t, exec.Command(harness.Bin(), "-c", harness.DD("bs=1 count=1000000000"), "-e", tt.script), false)
			time.Sleep(time.Second) // let the flood run
			f.mu.Lock()
			lines, ran := f.lines, time.Since(f.start)
			f.mu.Unlock()
			kids := children(f.cmd.Process.Pid)
			sent := f.interrupt(t)
			took := f.waitExit(t, sent, limit)
			t.Logf("SIGINT to exit: %v (%d lines printed in the first %v)", took.Round(time.Millisecond), lines, ran.Round(time.Millisecond))
			if took > limit {
				t.Errorf("gtrace took %v to exit after SIGINT, want at most %v", took, limit)
			}
			if code := f.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d, want 0\nstderr:\n%s", code, f.stderr.String())
			}
			waitGone(t, kids, 10*time.Second)
			select {
			case <-f.eof:
			case <-time.After(10 * time.Second):
				t.Fatal("stdout still open 10 s after gtrace exited")
			}
			tail := string(f.tail)
			for _, m := range tt.maps {
				re := regexp.MustCompile(`(?m)^` + m + `(\[.*\])?: (\d+)$`)
				if sub := re.FindStringSubmatch(tail); sub == nil {
					t.Errorf("%s not printed at exit; output ends with:\n%s", m, lastLines(tail, 5))
				} else if m == "@reads" {
					n, _ := strconv.Atoi(sub[2])
					t.Logf("%d events fired, %.0f/s", n, float64(n)/sent.Sub(f.start).Seconds())
				}
			}
		})
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestReliabilitySecondSigint checks that a second SIGINT ends gtrace at
// once while it is still handling the first, stuck writing to a stdout
// that nobody reads: during a flood of events, and while printing a map
// too large for the pipe.
func TestReliabilitySecondSigint(t *testing.T) {
	testutils.RequireRoot(t)
	// "At once", bounded generously for a loaded machine.
	const limit = time.Second
	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{"flood", []string{"-c", harness.DD("bs=1 count=1000000000"), "-e", floodScript}, nil},
		{"huge map", []string{"-e", `BEGIN { for ($i : 0..200000) { @big[$i] = $i; } printf("filled\n"); }`},
			[]string{"BPFTRACE_MAX_MAP_KEYS=300000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(harness.Bin(), tt.args...)
			cmd.Env = append(os.Environ(), tt.env...)
			f := startFlood(t, cmd, true)
			kids := children(cmd.Process.Pid)
			time.Sleep(500 * time.Millisecond) // the pipe fills up
			f.interrupt(t)
			time.Sleep(500 * time.Millisecond)
			select {
			case <-f.exited:
				t.Fatalf("gtrace finished the first SIGINT although its output was not read\nstderr:\n%s", f.stderr.String())
			default:
			}
			sent := f.interrupt(t)
			took := f.waitExit(t, sent, limit)
			t.Logf("second SIGINT to exit: %v, exit code %d", took.Round(time.Millisecond), cmd.ProcessState.ExitCode())
			if took > limit {
				t.Errorf("gtrace took %v to exit after a second SIGINT, want at most %v", took, limit)
			}
			waitGone(t, kids, 10*time.Second)
		})
	}
}

// bpfWatch counts the bpf() calls of gtrace's -c child by command.
const bpfWatch = `tracepoint:syscalls:sys_enter_bpf /pid == cpid/ { @bpf[args.cmd] = count(); }`

var bpfCallLine = regexp.MustCompile(`(?m)^@bpf\[(\d+)\]: (\d+)$`)

// bpfCalls runs command as the -c child of a gtrace running bpfWatch and
// returns the bpf() calls it made, by command (BPF_MAP_CREATE is 0,
// BPF_PROG_LOAD 5), whatever other processes do meanwhile. The child is
// let go once the probe is attached, so every call from its first
// instruction to its exit is counted.
func bpfCalls(t *testing.T, command string) map[int]int {
	t.Helper()
	r := harness.RunTimeout(t, 60*time.Second, harness.Bin(), "-c", command, "-e", bpfWatch)
	if r.Code != 0 {
		t.Fatalf("watching %q: exit code %d\n%s", command, r.Code, r.Stderr)
	}
	calls := map[int]int{}
	for _, m := range bpfCallLine.FindAllStringSubmatch(r.Stdout, -1) {
		cmd, _ := strconv.Atoi(m[1])
		calls[cmd], _ = strconv.Atoi(m[2])
	}
	return calls
}

// bpfProgLoad is BPF_PROG_LOAD, the bpf() command that loads a program.
const bpfProgLoad = 5

// unsafeArgs are arguments for each unsafe builtin.
var unsafeArgs = map[sema.Func]string{
	sema.FSystem: `"true"`,
	sema.FSignal: `"KILL"`,
}

// TestReliabilityUnsafeRefused walks the builtin table: a program calling
// any unsafe builtin is refused without --unsafe, with bpftrace's message
// and exit code 1, and makes no bpf() call at all; with --unsafe it loads.
func TestReliabilityUnsafeRefused(t *testing.T) {
	testutils.RequireRoot(t)
	tested := 0
	for _, f := range sema.AllFuncs() {
		if !f.Unsafe() {
			continue
		}
		tested++
		t.Run(f.String(), func(t *testing.T) {
			args, ok := unsafeArgs[f]
			if !ok {
				t.Fatalf("unsafe builtin %s has no arguments in unsafeArgs", f)
			}
			src := fmt.Sprintf("BEGIN { %s(%s); exit(); }", f, args)
			script := filepath.Join(t.TempDir(), "unsafe.bt")
			if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			r := harness.Gtrace(t, script)
			want := fmt.Sprintf("ERROR: %s() is an unsafe function being used in safe mode", f)
			if r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Errorf("%s: exit code %d, stderr:\n%s\nwant exit code 1 and %q", src, r.Code, r.Stderr, want)
			}
			if r.Stdout != "" {
				t.Errorf("%s: printed %q", src, r.Stdout)
			}
			if calls := bpfCalls(t, harness.Bin()+" "+script); len(calls) > 0 {
				t.Errorf("%s: bpf() called although refused: %v", src, calls)
			}
			// The watch sees loads: --unsafe --dry-run loads the program.
			if calls := bpfCalls(t, harness.Bin()+" --unsafe --dry-run "+script); calls[bpfProgLoad] == 0 {
				t.Errorf("%s --unsafe --dry-run: no program loaded: bpf() calls %v", src, calls)
			}
		})
	}
	if tested == 0 {
		t.Fatal("the builtin table marks no function unsafe")
	}
}

// TestReliabilityCapabilities runs gtrace without the capabilities it
// needs: the missing one is named, and no bpf() call is made. With
// CAP_SYS_ADMIN, or CAP_BPF and CAP_PERFMON without root, it runs.
func TestReliabilityCapabilities(t *testing.T) {
	testutils.RequireRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testutils.Skip(t, "setpriv (util-linux) not found")
	}
	// An unprivileged user must reach the binary and the script:
	// harness.Bin()'s directory and t.TempDir() are private.
	dir, err := os.MkdirTemp("", "gtrace-caps-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin, script := filepath.Join(dir, "gtrace"), filepath.Join(dir, "caps.bt")
	b, err := os.ReadFile(harness.Bin())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `profile:hz:99 { exit(); } BEGIN { printf("hello\n"); }`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tracepoint's format is read from tracefs, root's only, while
	// checking: the capability must be named before that.
	tpScript := filepath.Join(dir, "tp.bt")
	if err := os.WriteFile(tpScript, []byte(`tracepoint:sched:sched_switch { exit(); }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	nobody := []string{"--reuid=65534", "--regid=65534", "--clear-groups"}
	tests := []struct {
		name    string
		setpriv []string
		missing string // the capability named, or "" if gtrace runs
		script  string // the script when not the default one
	}{
		{"unprivileged user", nobody, "CAP_BPF", ""},
		{"unprivileged user, tracepoint", nobody, "CAP_BPF", tpScript},
		{"root without CAP_BPF", []string{"--inh-caps=-all", "--bounding-set=-bpf,-sys_admin"}, "CAP_BPF", ""},
		{"root without CAP_PERFMON", []string{"--inh-caps=-all", "--bounding-set=-perfmon,-sys_admin"}, "CAP_PERFMON", ""},
		{"root with CAP_SYS_ADMIN only", []string{"--inh-caps=-all", "--bounding-set=-bpf,-perfmon"}, "", ""},
		{"user with CAP_BPF and CAP_PERFMON",
			append(nobody, "--inh-caps=+bpf,+perfmon", "--ambient-caps=+bpf,+perfmon"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := script
			if tt.script != "" {
				run = tt.script
			}
			argv := append(append([]string{setpriv}, tt.setpriv...), bin, run)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = "/"
			r := harness.RunCmd(t, cmd, 30*time.Second)
			calls := bpfCalls(t, strings.Join(argv, " "))
			if tt.missing == "" {
				if r.Code != 0 || !strings.Contains(r.Stdout, "hello\n") {
					t.Errorf("exit code %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
				}
				if calls[bpfProgLoad] == 0 {
					t.Errorf("no program loaded: bpf() calls %v", calls)
				}
				return
			}
			want := fmt.Sprintf("ERROR: missing %s capability: please run gtrace as the root user", tt.missing)
			if r.Code != 1 || !strings.HasPrefix(r.Stderr, want) {
				t.Errorf("exit code %d, stderr:\n%s\nwant exit code 1 and %q", r.Code, r.Stderr, want)
			}
			if r.Stdout != "" {
				t.Errorf("printed %q", r.Stdout)
			}
			if len(calls) > 0 {
				t.Errorf("bpf() called although refused: %v", calls)
			}
		})
	}
}

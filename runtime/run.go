package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"gtrace/codegen"
	"gtrace/output"
	"gtrace/probe"
	"gtrace/sema"
	"gtrace/symbol"
)

// Options control a run.
type Options struct {
	Printer output.Printer
	Stderr  io.Writer
	// Verbose prints per-probe instruction counts and, on a verifier
	// rejection, the verifier's whole log.
	Verbose bool
	// DryRun loads every program through the verifier, then stops.
	DryRun bool
	// Quiet leaves out the "Attached N probes" line.
	Quiet bool
	// Pid limits user-space probes to one process (-p); 0 for all.
	Pid int
	// MissingProbes says what a probe that fails to attach does, as
	// bpftrace's missing_probes: "error" ends the run, "warn" warns and
	// goes on without it, "ignore" goes on.
	MissingProbes string
	// Stats turns the kernel's accounting of BPF programs on while
	// tracing and prints each probe's runs and run time at exit.
	Stats bool
	// UnwindPids are the processes whose unwind tables dw_ustack
	// reads: -p's, -c's and those of --dwarf-pid.
	UnwindPids []int
	// Cpid is the -c child's pid. As in bpftrace, its uprobes are not
	// limited to it: a child's children run the same libraries.
	Cpid int
	// Timed, when set, receives how long loading and attaching took,
	// once every probe is attached.
	Timed func(Timings)
	// Missed, when set, receives once the probes are stopped how many
	// hits the kernel skipped: those their kprobes missed, and runs
	// refused because another BPF program was running on the CPU, as a
	// kprobe that fires in an interrupt of one is.
	Missed func(n uint64)
	// Attached is called once every probe is attached, to let a -c
	// child go; Wait, which returns when the child or the -p process
	// has ended, ends tracing as exit() does when it returns.
	Attached func()
	Wait     func()
	// Notify, if set, is called as soon as the probes are attached,
	// before what BEGIN sent is printed, as bpftrace tells its test
	// runner.
	Notify func()
	// Bench runs the bench probes instead of attaching any (--mode
	// bench).
	Bench bool
	// Test runs the test probes instead of attaching any (--mode test).
	Test bool
	// Flush, if set, writes out what the Printer buffers. It is called
	// whenever the ring buffer is empty, so that output is batched
	// while events pour in and still appears as soon as they stop.
	Flush func() error
	// NoWarnings silences the program's warnings: warnf() and those of
	// its operations, such as a division by zero.
	NoWarnings bool
	// KeepQueued handles, after a signal has stopped tracing, the events
	// the probes sent before they were detached, instead of dropping
	// them as bpftrace does: a recorder, such as gtrace class, wants
	// every call up to its end.
	KeepQueued bool
	// Snapshots, if set, is called once the probes are attached with a
	// function that reads the maps and the probes' costs while tracing
	// (gtrace serve). That function may be called from any goroutine;
	// once tracing has ended it returns ErrEnded.
	Snapshots func(read func() (*Snapshot, error))
}

// run is the state of one run.
type run struct {
	out   *codegen.Output
	opts  *Options
	coll  *ebpf.Collection
	progs map[string]*ebpf.Program
	// btfCache holds the kernel's parsed BTF for the programs that
	// are bound to a function at load.
	btfCache *btf.Cache
	links    []link.Link
	dec      *decoder
	rd       *ringbuf.Reader

	formats  map[int]*output.Format
	globals  codegen.Globals
	exit     bool
	exitCode int

	// lostSeen is the number of refused events reported so far, and
	// lostChecked when the counter was last read.
	lostSeen    uint64
	lostChecked time.Time

	// progLinks holds each program's links; probeMissed, what their
	// kprobes missed, and stats, each probe's runs, read as tracing
	// stops (--stats).
	progLinks   map[string][]link.Link
	unattached  map[string]bool // programs whose probe failed to attach
	probeMissed map[string]uint64
	stats       []output.ProbeStat

	// stopping is raised by the first signal: no more probes attach, and
	// events still queued are dropped. It is lowered again for END.
	stopping atomic.Bool
	// ended is raised when the -c child or the -p process has ended.
	ended atomic.Bool
	// inKernel is held for reading while gtrace attaches a probe and
	// hands its links over, and for writing by exitNow. Without a
	// keeper, gtrace attaches uprobes itself, and a registration that a
	// fatal signal cuts short can leave the uprobe behind (keeper.go).
	inKernel sync.RWMutex
	linksMu  sync.Mutex // guards links and progLinks while probes attach
	kept     int        // probes the keeper attached
	rcu      *rcuWaiter
	stopOnce sync.Once
	stopErr  error
	keeper   *keeper // nil for a script of BEGIN and END only

	// pcaps are skboutput()'s files, by name.
	pcaps map[string]*output.Pcap

	// snapshotReqs carries Options.Snapshots' requests to the event
	// loop; traced is closed when tracing has ended (snapshot.go).
	snapshotReqs chan chan snapshotReply
	traced       chan struct{}
	tracedClosed bool
}

// Run loads, attaches and runs a compiled script until exit(), a signal,
// or the end of a -c child, and returns the exit code the script chose.
// The caller has checked privileges first (CheckPrivileges), before
// compiling, which reads tracefs.
func Run(out *codegen.Output, opts *Options) (code int, err error) {
	if err := nothingRuns(out, opts); err != nil {
		return 1, err
	}
	boot, err := bootTime()
	if err != nil {
		return 1, err
	}
	r := &run{out: out, opts: opts, progs: map[string]*ebpf.Program{}, btfCache: btf.NewCache(),
		dec: &decoder{ksyms: &symbol.Kernel{}, usyms: &symbol.User{}, boot: boot, maxStrlen: out.MaxStrlen,
			trailer: out.StrTruncTrailer, defaultStack: out.StackMode, syms: newUserSymbols(out)},
		formats: map[int]*output.Format{}}
	defer r.close()
	loadStart := time.Now()
	if err := r.load(); err != nil {
		return 1, err
	}
	loaded := time.Since(loadStart)
	if opts.DryRun {
		return 0, nil
	}

	if err := r.setStart(); err != nil {
		return 1, err
	}
	if r.rcu, err = newRCUWaiter(); err != nil {
		return 1, err
	}
	if opts.Stats {
		// The kernel keeps statistics on while this fd is open: it
		// turns them off again when gtrace exits, however it exits.
		stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
		if err != nil {
			return 1, fmt.Errorf("--stats: enable BPF statistics: %w", err)
		}
		defer stats.Close()
	}
	if r.rd, err = ringbuf.NewReader(r.coll.Maps["events"]); err != nil {
		return 1, fmt.Errorf("open ring buffer: %w", err)
	}
	if opts.Bench {
		return r.bench()
	}
	if opts.Test {
		return r.tests()
	}

	// Signals stop tracing; a second one exits at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		r.stopping.Store(true)
		r.stopProbes() // an error shows again when Run stops them
		r.rd.Flush()   // wakes the event loop
		<-sigs
		r.exitNow(1)
	}()
	// The signals self:signal probes wait for run them, from the
	// start of tracing, instead of ending gtrace.
	selfSigs, selfProgs := r.selfSignals()
	defer signal.Stop(selfSigs)

	if r.attachesProbes() {
		if r.keeper, err = startKeeper(); err != nil {
			fmt.Fprintf(opts.Stderr, "WARNING: no process to keep the probes: %v; gtrace attaches them and detaches them as it exits\n", err)
		}
	}
	// As bpftrace does, run BEGIN, attach, and only then print what
	// BEGIN printed: a tool's header comes before any event, and is
	// never printed above an attach error.
	if err := r.runSpecial(probe.Begin); err != nil {
		return 1, err
	}
	attachStart := time.Now()
	if err := r.attach(); err != nil {
		return 1, err
	}
	if opts.Verbose {
		fmt.Fprintf(opts.Stderr, "attached %d links in %v\n", len(r.links)+r.kept, time.Since(attachStart).Round(time.Microsecond))
	}
	if opts.Timed != nil {
		opts.Timed(Timings{Load: loaded, Attach: time.Since(attachStart), Links: len(r.links) + r.kept})
	}
	if !opts.Quiet {
		opts.Printer.AttachedProbes(r.attachedCount())
	}
	if opts.Notify != nil {
		opts.Notify()
	}
	r.startSnapshots()
	defer r.endSnapshots()
	if err := r.drain(); err != nil {
		return 1, err
	}
	if err := r.readIters(); err != nil {
		return 1, err
	}
	if !r.exit && !r.stopping.Load() && opts.Attached != nil {
		opts.Attached()
	}
	if !r.exit && !r.stopping.Load() && r.waitsForEvents(selfProgs) {
		stopWatch := r.watchMappings()
		stopSelf := r.runOnSignals(selfSigs, selfProgs)
		err := r.loop()
		stopSelf()
		stopWatch()
		if err != nil {
			return 1, err
		}
	}
	r.endSnapshots()
	// Stop the probes before END, as bpftrace does, so that END sees
	// the final state.
	if opts.Stats {
		r.probeMissed = r.kprobeMisses()
	}
	if err := r.stopProbes(); err != nil {
		return 1, err
	}
	if opts.Stats {
		r.stats = r.probeStats()
	}
	if opts.Missed != nil {
		opts.Missed(r.missed())
	}
	// After exit() or a signal, the events the probes sent meanwhile
	// are dropped, as bpftrace ignores what it reads once exit() was
	// handled: a later interval's prints, or its own exit().
	switch {
	case r.exit || r.stopping.Load() && !r.opts.KeepQueued:
		r.discardQueued()
	case r.stopping.Load():
		r.stopping.Store(false)
		if err := r.drain(); err != nil {
			return 1, err
		}
	}
	// As in bpftrace, END's events are all that is left, and all run.
	r.exit = false
	r.stopping.Store(false)
	if err := r.runSpecial(probe.End); err != nil {
		return 1, err
	}
	if err := r.drain(); err != nil {
		return 1, err
	}
	if err := r.finish(); err != nil {
		return 1, err
	}
	return r.exitCode, nil
}

// load creates the maps and loads every program through the verifier.
func (r *run) load() error {
	specs, fillUnwind, err := unwindTables(r.out.Spec.Maps, r.opts.UnwindPids)
	if err != nil {
		return err
	}
	coll, err := ebpf.NewCollection(&ebpf.CollectionSpec{Maps: specs})
	if err != nil {
		return fmt.Errorf("create maps: %w", err)
	}
	r.coll = coll
	if fillUnwind != nil {
		if err := fillUnwind(coll); err != nil {
			return err
		}
	}
	r.dec.stacks = stackMaps(coll)
	// The verifier's work is most of a load: one program per CPU at a
	// time, so that thousands of probes load in parallel.
	all := append(r.out.Progs, r.out.Dispatchers...)
	loaded := make([]*ebpf.Program, len(all))
	errs := make([]error, len(all))
	sizes := make([]int, len(all))
	forEach(len(all), func(i int) {
		loaded[i], sizes[i], errs[i] = r.loadProgram(all[i])
	})
	for i, p := range all {
		if loaded[i] != nil {
			r.progs[p.Name] = loaded[i]
		}
	}
	for i, p := range all {
		if errs[i] != nil {
			return r.loadError(p, errs[i])
		}
		if r.opts.Verbose {
			fmt.Fprintf(r.opts.Stderr, "%s: %d instructions, verifier %s\n", p.Prog.Probe.Name,
				sizes[i], processed(loaded[i].VerifierLog))
		}
	}
	return nil
}

// loadProgram loads one program through the verifier with its maps, and
// returns its number of instructions.
func (r *run) loadProgram(p *codegen.Program) (*ebpf.Program, int, error) {
	spec := r.out.Spec.Programs[p.Name].Copy()
	refs := spec.Instructions.ReferenceOffsets()
	for name, m := range r.coll.Maps {
		if len(refs[name]) == 0 {
			continue
		}
		if err := spec.Instructions.AssociateMap(name, m); err != nil {
			return nil, 0, fmt.Errorf("associate map %s: %w", name, err)
		}
	}
	popts := ebpf.ProgramOptions{LogSizeStart: uint32(r.out.LogSize)} // log_size
	if r.opts.Verbose {
		popts.LogLevel = ebpf.LogLevelStats
	}
	if spec.AttachTo == "" {
		prog, err := ebpf.NewProgramWithOptions(spec, popts)
		return prog, len(spec.Instructions), err
	}
	// A program bound to a kernel function at load (fentry, fexit)
	// finds it in the kernel's BTF. Alone, each load would parse all of
	// vmlinux's BTF again, a second a program in an emulated guest; a
	// collection of one program shares the parsed types with the others.
	coll, err := ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{p.Name: spec}},
		ebpf.CollectionOptions{Programs: popts, Cache: r.btfCache})
	if err != nil {
		// The collection names the program; loadError does too.
		if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "program "+p.Name+": ") {
			err = inner
		}
		return nil, len(spec.Instructions), err
	}
	defer coll.Close()
	return coll.DetachProgram(p.Name), len(spec.Instructions), nil
}

// forEach calls f(0) to f(n-1) on as many goroutines as there are CPUs.
func forEach(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n, goruntime.NumCPU()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// processed pulls "processed N insns" out of a verifier log.
func processed(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "processed ") {
			if i := strings.Index(line, " ("); i > 0 {
				return line[:i]
			}
			return line
		}
	}
	return "processed ? insns"
}

// setStart records the monotonic clock's now, the zero of elapsed.
func (r *run) setStart() error {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return err
	}
	r.globals.StartNs = uint64(ts.Nano())
	r.globals.TaiOffset = taiOffset()
	return r.coll.Maps["globals"].Update(uint32(0), &r.globals, ebpf.UpdateAny)
}

// taiOffset measures CLOCK_TAI minus CLOCK_BOOTTIME: a TAI reading
// between two boot clock readings, from the closest of a few tries, so
// that nsecs(sw_tai) is the boot clock plus it.
func taiOffset() uint64 {
	var offset, best int64 = 0, -1
	for range 5 {
		var b1, tai, b2 unix.Timespec
		if unix.ClockGettime(unix.CLOCK_BOOTTIME, &b1) != nil ||
			unix.ClockGettime(unix.CLOCK_TAI, &tai) != nil ||
			unix.ClockGettime(unix.CLOCK_BOOTTIME, &b2) != nil {
			return 0
		}
		if gap := b2.Nano() - b1.Nano(); best < 0 || gap < best {
			best, offset = gap, tai.Nano()-(b1.Nano()+b2.Nano())/2
		}
	}
	return uint64(offset)
}

// stopProbes stops every probe, once: it raises the flag that each
// program checks first, then waits until no program is still running.
// A signal or the end of the -c child stops them before it wakes the
// event loop, whose wake-up is a read gtrace's own probes would see.
func (r *run) stopProbes() error {
	r.stopOnce.Do(func() {
		stopped := r.globals
		stopped.Stopped = 1
		if err := r.coll.Maps["globals"].Update(uint32(0), &stopped, ebpf.UpdateAny); err != nil {
			r.stopErr = fmt.Errorf("stop probes: %w", err)
			return
		}
		if err := r.rcu.wait(); err != nil {
			r.stopErr = fmt.Errorf("wait for running probes: %w", err)
		}
	})
	return r.stopErr
}

// exitNow exits at once, on a second signal. It waits for the probes
// being attached, which take milliseconds each, and stops the probes
// without waiting for them; the keeper holds their links.
func (r *run) exitNow(code int) {
	r.inKernel.Lock()
	stopped := codegen.Globals{Stopped: 1} // elapsed, read no more, need no start
	r.coll.Maps["globals"].Update(uint32(0), &stopped, ebpf.UpdateAny)
	os.Exit(code)
}

// runSpecial runs the BEGIN or END programs.
func (r *run) runSpecial(kind probe.Kind) error {
	for _, p := range r.out.Progs {
		if p.Prog.Probe.Kind != kind {
			continue
		}
		if err := r.runProgram(p); err != nil {
			return err
		}
	}
	return nil
}

// runProgram runs a program gtrace runs itself (BEGIN, END, self) once,
// with BPF_PROG_TEST_RUN.
func (r *run) runProgram(p *codegen.Program) error {
	if _, err := r.progs[p.Name].Run(&ebpf.RunOptions{Context: make([]byte, 8)}); err != nil {
		return fmt.Errorf("run %s: %w", p.Prog.Probe.Name, err)
	}
	return nil
}

// selfSignals catches the signals that the script's self:signal probes
// wait for, and returns the programs each runs. SIGUSR1 is caught in
// any case, as bpftrace catches it: with no probe waiting for it, it
// does nothing (bpftrace 0.17 printed the maps; current bpftrace leaves
// that to self:signal:SIGUSR1 probes).
func (r *run) selfSignals() (chan os.Signal, map[os.Signal][]*codegen.Program) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	progs := map[os.Signal][]*codegen.Program{}
	for _, p := range r.out.Progs {
		if sig := p.Prog.Probe.Signal(); sig != 0 {
			if progs[sig] == nil {
				signal.Notify(sigs, sig)
			}
			progs[sig] = append(progs[sig], p)
		}
	}
	return sigs, progs
}

// runOnSignals runs, each time a signal arrives on sigs, the self:signal
// programs that wait for it, in the script's order, until the returned
// function is called; their output goes through the event loop. A signal
// that arrives while they run is kept and runs them once more.
func (r *run) runOnSignals(sigs <-chan os.Signal, progs map[os.Signal][]*codegen.Program) (stop func()) {
	if len(progs) == 0 {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				for _, p := range progs[sig] {
					if r.stopping.Load() {
						return
					}
					if err := r.runProgram(p); err != nil {
						fmt.Fprintf(r.opts.Stderr, "ERROR: %v\n", err)
					}
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

func (r *run) attach() error {
	// Fused syscall programs are reached through the program array,
	// filled before their dispatchers attach.
	for name, slot := range r.out.Slots {
		if err := r.coll.Maps["syscalls"].Put(uint32(slot), r.progs[name]); err != nil {
			return fmt.Errorf("fuse %s: %w", name, err)
		}
	}
	var attach []*codegen.Program
	for _, p := range append(r.out.Progs, r.out.Dispatchers...) {
		if !p.Prog.Probe.Attached() {
			continue
		}
		if _, fused := r.out.Slots[p.Name]; fused {
			continue
		}
		if err := r.fillNames(p); err != nil {
			return err
		}
		attach = append(attach, p)
	}
	// Each attach is a few system calls; many probes attach in parallel,
	// user-space probes in the keeper.
	errs := make([]error, len(attach))
	r.progLinks = map[string][]link.Link{}
	for _, wave := range attachWaves(attach) {
		r.attachWave(attach, wave, errs)
	}
	r.unattached = map[string]bool{}
	for i, err := range errs {
		if err != nil {
			r.unattached[attach[i].Name] = true
		}
		switch {
		case err == nil || r.opts.MissingProbes == "ignore":
		case r.opts.MissingProbes == "warn":
			r.warnUnattached(lockdownNote(err))
		default:
			return lockdownNote(err)
		}
	}
	return nil
}

// attachWave attaches the programs attach[i] for i in wave, in parallel,
// and sets their errors in errs.
func (r *run) attachWave(attach []*codegen.Program, wave []int, errs []error) {
	var own, user []int
	for _, i := range wave {
		p := attach[i]
		if r.keeper != nil && p.Prog.Probe.UserSpace() {
			user = append(user, i)
		} else {
			own = append(own, i)
		}
	}
	userDone := make(chan struct{})
	go func() {
		defer close(userDone)
		if len(user) == 0 || r.stopping.Load() {
			return
		}
		probes, progs := make([]*probe.Probe, len(user)), make([]*ebpf.Program, len(user))
		for j, i := range user {
			probes[j], progs[j] = &attach[i].Prog.Probe, r.progs[attach[i].Name]
		}
		for j, err := range r.keeper.attach(probes, progs, r.opts.Pid) {
			errs[user[j]] = err
			if err == nil {
				r.kept++
			}
		}
	}()
	forEach(len(own), func(j int) {
		r.inKernel.RLock()
		defer r.inKernel.RUnlock()
		if r.stopping.Load() {
			return
		}
		i := own[j]
		links, err := probe.Attach(&attach[i].Prog.Probe, r.progs[attach[i].Name], r.attachPid(&attach[i].Prog.Probe))
		errs[i] = err
		if r.keeper != nil && err == nil {
			errs[i] = r.keeper.keep(links)
		}
		r.linksMu.Lock()
		r.links = append(r.links, links...)
		r.progLinks[attach[i].Name] = links
		r.linksMu.Unlock()
	})
	<-userDone
}

// attachesProbes reports whether the script has probes to attach, not
// only probes gtrace runs itself (BEGIN, END, self).
func (r *run) attachesProbes() bool {
	for _, p := range r.out.Progs {
		if p.Prog.Probe.Attached() {
			return true
		}
	}
	return false
}

// waitsForEvents reports whether the script has probes that fire after
// BEGIN: any attached probe, interval and profile included, or a
// self:signal probe. A script of BEGIN and END only ends after BEGIN,
// as in bpftrace.
func (r *run) waitsForEvents(self map[os.Signal][]*codegen.Program) bool {
	return r.attachesProbes() || len(self) > 0
}

// fillNames writes a multi-kprobe's probe and func names by cookie.
func (r *run) fillNames(p *codegen.Program) error {
	if p.Names == "" {
		return nil
	}
	for i := range p.Prog.Probe.Funcs {
		fn, name := p.Prog.Probe.FuncName(i)
		v := make([]byte, 2*p.NameSize)
		copy(v[:p.NameSize-1], name)
		copy(v[p.NameSize:2*p.NameSize-1], fn)
		if err := r.coll.Maps[p.Names].Put(uint32(i), v); err != nil {
			return fmt.Errorf("%s: names: %w", p.Prog.Probe.Name, err)
		}
	}
	return nil
}

// close releases what the run holds but its links, which the keeper
// holds too (see keeper.go): closing programs and maps that links still
// hold detaches nothing.
func (r *run) close() {
	if len(r.links)+r.kept > 0 {
		// After an error the probes still run.
		r.stopProbes() // on failure, they stop when the kernel detaches them
	}
	if r.rcu != nil {
		r.rcu.Close()
	}
	if r.rd != nil {
		r.rd.Close()
	}
	for _, p := range r.progs {
		p.Close()
	}
	if r.coll != nil {
		r.coll.Close()
	}
	r.closePcaps()
}

// loop handles events until exit(), a signal or the end of the child.
// It sleeps until there is work: an event, or a wake-up (rd.Flush) by a
// signal or the child's end. It never polls on a timer, so that an idle
// gtrace makes no system calls to show up in what it traces.
func (r *run) loop() error {
	if r.opts.Wait != nil {
		quit := make(chan struct{})
		defer close(quit)
		go func() {
			r.opts.Wait()
			select {
			case <-quit:
				return // tracing has ended
			default:
			}
			// Straight on, in this goroutine: waking another one can
			// make the Go runtime read its netpoll eventfd, which
			// gtrace's own probes would see.
			r.stopProbes() // an error shows again when Run stops them
			r.ended.Store(true)
			r.rd.Flush()
		}()
	}
	var rec ringbuf.Record
	batch := 0         // events handled since the ring buffer was last empty
	unchecked := false // events handled since the lost counter was read
	for !r.exit {
		if r.stopping.Load() {
			return nil
		}
		if r.snapshotReqs != nil {
			r.answerSnapshot()
		}
		if r.ended.Load() {
			return r.drain()
		}
		var deadline time.Time
		if r.rd.AvailableBytes() == 0 {
			if err := r.flush(); err != nil {
				return err
			}
			// Events are refused only while the ring buffer is
			// full, that is while there are events to read: the
			// counter needs reading only after some were read.
			if unchecked && time.Since(r.lostChecked) >= lostInterval {
				if err := r.reportLost(); err != nil {
					return err
				}
				unchecked = false
			}
			if unchecked {
				deadline = r.lostChecked.Add(lostInterval)
			}
			if batch >= busyBatch {
				// Events pour in. Each one written while the reader
				// has caught up wakes it, which costs the traced
				// program about a microsecond here; in a short pause
				// the next ones gather, and only the first wakes.
				batch = 0
				time.Sleep(busyPause)
				continue
			}
			batch = 0
		}
		r.rd.SetDeadline(deadline)
		err := r.rd.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ringbuf.ErrFlushed) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		if err := r.handle(rec.RawSample); err != nil {
			return err
		}
		batch++
		unchecked = true
	}
	return nil
}

// A reader that found busyBatch events or more before the ring buffer
// ran empty pauses for busyPause before it looks again, rather than
// wait to be woken. The pause bounds how late an event is printed
// under load; the 1 MiB ring holds some 40,000 events, 15 ms of the
// fastest event rate measured here.
const (
	busyBatch = 64
	busyPause = time.Millisecond
)

// drain handles every event already in the ring buffer.
func (r *run) drain() error {
	var rec ringbuf.Record
	for !r.exit && !r.stopping.Load() && r.rd.AvailableBytes() > 0 {
		r.rd.SetDeadline(time.Now())
		if err := r.rd.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return fmt.Errorf("read events: %w", err)
		}
		if err := r.handle(rec.RawSample); err != nil {
			return err
		}
	}
	if err := r.flush(); err != nil {
		return err
	}
	return r.reportLost()
}

// flush writes out what the printer buffers.
func (r *run) flush() error {
	if r.opts.Flush == nil {
		return nil
	}
	if err := r.opts.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// lostInterval is how often the loop reads the lost-event counter.
const lostInterval = 100 * time.Millisecond

// reportLost prints how many events the ring buffer refused since the last
// report, as bpftrace v0.26 does between polls of its ring buffer: the
// text printer says "Lost N events" on stderr, the JSON printer writes a
// lost_events record.
func (r *run) reportLost() error {
	r.lostChecked = time.Now()
	n := r.sumCounter("lost", 0)
	if n <= r.lostSeen {
		return nil
	}
	delta := n - r.lostSeen
	r.lostSeen = n
	return r.opts.Printer.LostEvents(delta)
}

// finish prints lost events and every map, as bpftrace does at exit.
func (r *run) finish() error {
	if err := r.reportLost(); err != nil {
		return err
	}
	// bpftrace v0.26 also warns of the total on stderr, whatever the
	// output format, so that it is not lost among the program's output.
	if r.lostSeen > 0 {
		fmt.Fprintf(r.opts.Stderr, "WARNING: Total lost event count: %d\n", r.lostSeen)
	}
	var maps []*output.Map
	for _, l := range r.out.SortedMaps() {
		if n := r.sumCounter("mapfull", l.Index); n > 0 {
			// bpftrace's words, which it prints at each refused update,
			// once, with the map and the count of refusals.
			fmt.Fprintf(r.opts.Stderr, "WARNING: Map full; can't update element (%s: %d updates refused). Try increasing max_map_keys config "+
				"or manually setting the max entries in a map declaration e.g. `let %s = hash(5000)`\n", l.Name, n, l.Name)
		}
		m, err := r.readMap(l)
		if err != nil {
			return err
		}
		maps = append(maps, m)
	}
	if !r.out.PrintMapsOnExit {
		maps = nil
	}
	if err := output.PrintExit(r.opts.Printer, maps); err != nil {
		return err
	}
	if r.opts.Stats {
		if err := r.opts.Printer.Stats(r.stats, r.lostSeen); err != nil {
			return err
		}
	}
	return r.flush()
}

// kprobeMisses reads, per program, how many hits its kprobes missed,
// where the kernel reports it in the link's information.
func (r *run) kprobeMisses() map[string]uint64 {
	missed := map[string]uint64{}
	for name, links := range r.progLinks {
		for _, l := range links {
			info, err := l.Info()
			if err != nil {
				continue
			}
			if km := info.KprobeMulti(); km != nil {
				missed[name] += km.Missed
			}
			if pe := info.PerfEvent(); pe != nil && pe.Kprobe() != nil {
				missed[name] += pe.Kprobe().Missed
			}
		}
	}
	return missed
}

// missed counts the hits the kernel skipped over every probe: those
// their kprobes missed, and the runs it refused for recursion, which it
// counts whether or not statistics are on.
func (r *run) missed() uint64 {
	var n uint64
	for _, m := range r.kprobeMisses() {
		n += m
	}
	for _, prog := range r.progs {
		if st, err := prog.Stats(); err == nil {
			n += st.RecursionMisses
		}
	}
	return n
}

// probeStats reads each program's run count and run time, which the
// kernel keeps while statistics are on, and the hits it missed: to
// recursion, and in its kprobes. Fused syscall programs run by
// tail call, which the kernel does not account: their cost shows under
// their dispatchers.
func (r *run) probeStats() []output.ProbeStat {
	var stats []output.ProbeStat
	for _, p := range append(r.out.Progs, r.out.Dispatchers...) {
		if _, fused := r.out.Slots[p.Name]; fused {
			continue
		}
		s := output.ProbeStat{Probe: p.Prog.Probe.Name, Missed: r.probeMissed[p.Name]}
		if prog := r.progs[p.Name]; prog != nil {
			if st, stopped, err := r.runsAfterStop(prog, p.StopSlot); err == nil {
				// Runs that began after the stop returned at once.
				s.Runs, s.TotalNs = st.RunCount-stopped, uint64(st.Runtime)
				s.Missed += st.RecursionMisses
			}
		}
		stats = append(stats, s)
	}
	return stats
}

// runsAfterStop reads prog's statistics and how many of its runs the stop
// returned at once. The probes still fire, each run adding to both
// counts, so the stopped count is read before and after the statistics
// until no run came between: otherwise a busy probe's runs in between
// would count as stopped but not as run.
func (r *run) runsAfterStop(prog *ebpf.Program, slot int) (*ebpf.ProgramStats, uint64, error) {
	const tries = 100
	for i := 0; ; i++ {
		before := r.sumCounter("stopped", slot)
		st, err := prog.Stats()
		if err != nil {
			return nil, 0, err
		}
		if after := r.sumCounter("stopped", slot); after == before || i == tries {
			return st, before, nil
		}
	}
}

// sumCounter adds up slot index of a per-CPU counter array.
func (r *run) sumCounter(name string, index int) uint64 {
	var vals []uint64
	if err := r.coll.Maps[name].Lookup(uint32(index), &vals); err != nil {
		return 0
	}
	var n uint64
	for _, v := range vals {
		n += v
	}
	return n
}

// handle acts on one event.
func (r *run) handle(rec []byte) error {
	if len(rec) < 8 {
		return fmt.Errorf("short event of %d bytes", len(rec))
	}
	id := int(binary.LittleEndian.Uint64(rec))
	if id >= len(r.out.Events) {
		return fmt.Errorf("unknown event %d", id)
	}
	ev := r.out.Events[id]
	args := make([]output.Value, len(ev.Args))
	for i, t := range ev.Args {
		args[i] = r.dec.value(t, rec[ev.Offsets[i]:])
	}
	p := r.opts.Printer
	switch ev.Kind {
	case codegen.EvPrintf, codegen.EvCat, codegen.EvSystem:
		f, err := r.format(id, ev.Format)
		if err != nil {
			return err
		}
		s := f.Sprint(args)
		switch ev.Kind {
		case codegen.EvPrintf:
			return p.Printf(s)
		case codegen.EvCat:
			b, err := readCat(s, r.out.MaxCatBytes)
			if err != nil {
				fmt.Fprintf(r.opts.Stderr, "ERROR: failed to open file '%s' (%s)\n", s, Strerror(err))
				return nil
			}
			return p.Cat(string(b))
		default:
			b, _ := execShell(s)
			return p.Syscall(string(b))
		}
	case codegen.EvJoin:
		return p.Join(joinRecord(rec[8:], ev.Format))
	case codegen.EvWarning:
		if !r.opts.NoWarnings {
			fmt.Fprint(r.opts.Stderr, ev.Format)
		}
	case codegen.EvErrorf, codegen.EvWarnf:
		return r.message(id, ev, args)
	case codegen.EvSkbOutput:
		return r.skbOutput(ev, rec)
	case codegen.EvHelperError:
		return p.HelperError(helperError(ev, rec))
	case codegen.EvExit:
		r.exit = true
		r.exitCode = int(int64(binary.LittleEndian.Uint64(rec[ev.Offsets[0]:])))
	case codegen.EvPrintMap:
		m, err := r.readMap(ev.Map)
		if err != nil {
			return err
		}
		return p.Map(m, int(ev.Top), uint32(ev.Div))
	case codegen.EvPrintValue:
		return p.Value(args[0])
	case codegen.EvTime:
		s, err := output.TimeString(ev.Format, time.Now())
		if err != nil {
			return err
		}
		return p.Time(s)
	case codegen.EvClear:
		if ev.Map.Buckets > 0 || ev.Map.Single {
			// An array's entries cannot be deleted: emptied, they
			// read as no map at all.
			return zeroMap(r.coll.Maps[ev.Map.BPFName], ev.Map)
		}
		return clearMap(r.coll.Maps[ev.Map.BPFName], ev.Map.KeySize)
	case codegen.EvZero:
		if ev.Map.Single {
			return zeroSingle(r.coll.Maps[ev.Map.BPFName], ev.Map)
		}
		return zeroMap(r.coll.Maps[ev.Map.BPFName], ev.Map)
	}
	return nil
}

func (r *run) format(id int, s string) (*output.Format, error) {
	if f, ok := r.formats[id]; ok {
		return f, nil
	}
	f, err := output.ParseFormat(s)
	if err != nil {
		return nil, err
	}
	r.formats[id] = f
	return f, nil
}

// joinRecord joins the strings of a join() record, slots of
// sema.JoinArgSize bytes, up to the first empty one.
func joinRecord(b []byte, sep string) string {
	var parts []string
	for off := 0; off+sema.JoinArgSize <= len(b); off += sema.JoinArgSize {
		s := b[off : off+sema.JoinArgSize]
		if i := bytes.IndexByte(s, 0); i >= 0 {
			s = s[:i]
		}
		if len(s) == 0 {
			break
		}
		parts = append(parts, string(s))
	}
	return strings.Join(parts, sep)
}

// watchMappings keeps the symbolizer's view of the traced process's
// memory map fresh while tracing, so that its user stacks still resolve
// when they are printed after it has exited. It returns a function that
// stops watching.
func (r *run) watchMappings() func() {
	pid := max(r.opts.Pid, r.opts.Cpid)
	// Rereading the map 100 times a second shows in what is traced
	// (opens and reads by gtrace): only a script that prints user
	// symbols needs it.
	if pid == 0 || !printsUserSymbols(r.out) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			// No mapping holds address 0: the lookup rereads the map.
			r.dec.usyms.Resolve(uint32(pid), 0)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done) }
}

// printsUserSymbols reports whether a map or an event of out holds a
// user stack or a usym() value, which are symbolized in user space.
func printsUserSymbols(out *codegen.Output) bool {
	var user func(t *sema.Type) bool
	user = func(t *sema.Type) bool {
		return t != nil && (t.Kind == sema.UStack || t.Kind == sema.Usym || slices.ContainsFunc(t.Elems, user))
	}
	for _, m := range out.Maps {
		if user(m.Key) || user(m.Value) {
			return true
		}
	}
	for _, ev := range out.Events {
		if slices.ContainsFunc(ev.Args, user) {
			return true
		}
	}
	return false
}

// Timings are how long a run took to start tracing.
type Timings struct {
	// Load is the maps' creation and the programs' loads, verifier
	// included; Attach is attaching the programs.
	Load, Attach time.Duration
	// Links is the number of links attached.
	Links int
}

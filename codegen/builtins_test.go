package codegen_test

import (
	"slices"
	"strings"
	"testing"

	"gtrace/codegen"
	"gtrace/internal/fakekernel"
	"gtrace/lang/parser"
	"gtrace/lang/token"
	"gtrace/probe"
	"gtrace/sema"
)

// Samples are scripts that the checker accepts against the fake kernel
// (internal/fakekernel). Uprobes are on libc, whose dynamic symbols
// are there even when stripped; the fake kernel makes usdt probes up,
// whatever their binary. Samples on fentry and fexit use only what the
// real vfs_read has, so that they also check against a real kernel (see
// TestVerifierVM).

// builtinSamples holds scripts using each builtin variable, by name. A
// builtin allowed only in some probe kinds has a sample in each.
var builtinSamples = map[string][]string{
	"pid":     {`BEGIN { @x = pid; }`, `tracepoint:syscalls:sys_enter_read /pid == 1/ { @x[pid] = count(); }`},
	"tid":     {`BEGIN { @x[tid] = tid + 1; }`},
	"uid":     {`BEGIN { @x = uid; }`},
	"gid":     {`BEGIN { @x = gid; }`},
	"nsecs":   {`BEGIN { @x = nsecs; }`},
	"elapsed": {`interval:s:1 { @x = elapsed / 1000000; }`},
	"cpu":     {`profile:hz:99 { @x[cpu] = count(); }`},
	"comm":    {`BEGIN { @x[comm] = count(); printf("%s\n", comm); }`},
	"kstack":  {`kprobe:vfs_read { @x[kstack] = count(); }`, `BEGIN { print(kstack); }`},
	"args": {
		`tracepoint:syscalls:sys_enter_read { @x[args.comm] = sum(args.count); @y = str(args.filename); @z = args.p->in.y; }`,
		`tracepoint:syscalls:sys_exit_read { @x = hist(args.ret); }`,
		`fentry:vfs_read { @x[args.count] = count(); @y = args.file->f_flags; }`,
		`fexit:vfs_read { @x = args.count; }`,
	},
	"probe":   {`BEGIN { @x[probe] = count(); }`, `kprobe:vfs_read { printf("%s\n", probe); }`},
	"curtask": {`BEGIN { @x = curtask; }`},
	"cgroup":  {`BEGIN { @x = cgroup; }`},
	"rand":    {`BEGIN { @x = rand % 10; }`},
	"cpid":    {`BEGIN { @x = cpid; }`},
	"numaid":  {`BEGIN { @x = numaid; }`},
	"jiffies": {`BEGIN { @x = jiffies; }`},
	"argN": {
		`rawtracepoint:sched_switch { @x = arg1; }`,
		`kprobe:vfs_read { @x = arg0 + arg5; }`,
		`uprobe:libc:malloc { @x = arg2; }`,
		`usdt:prog:gtest:probe { @x = arg0 + arg1 + arg2; }`,
	},
	"func": {
		`kprobe:vfs_read { @x[func] = count(); }`,
		`kretprobe:vfs_read { @x[func] = count(); }`,
		`fentry:vfs_read { @x[func] = count(); }`,
		`fexit:vfs_read { @x[func] = count(); }`,
		`uprobe:libc:malloc { @x[func] = count(); }`,
		`uretprobe:libc:malloc { @x[func] = count(); }`,
	},
	"retval": {
		`kretprobe:vfs_read { @x = hist(retval); }`,
		`fexit:vfs_read { @x = sum(retval); }`,
		`uretprobe:libc:malloc { @x = retval; }`,
	},
	"ustack": {`uprobe:libc:malloc { @x[ustack] = count(); }`},
}

// funcSamples holds scripts calling each builtin function, by name.
var funcSamples = map[string][]string{
	"printf":      {`BEGIN { printf("%d %s %x %-5u|%c\n", pid, comm, 255, 7, 65); }`},
	"print":       {`BEGIN { @m[1] = 2; print(@m); print(@m, 1, 1); print((1, "a")); print(5); }`},
	"time":        {`BEGIN { time(); time("%H:%M:%S\n"); }`},
	"strftime":    {`BEGIN { printf("%s\n", strftime("%H:%M:%S", nsecs)); @x = strftime("%s", nsecs(tai)); }`},
	"exit":        {`BEGIN { exit(); }`, `interval:s:1 { exit(2); }`},
	"str":         {`tracepoint:syscalls:sys_enter_read { @x = str(args.buf); @y = str(args.buf, 8); }`},
	"ksym":        {`kprobe:vfs_read { @x[ksym(arg0)] = count(); }`},
	"kaddr":       {`BEGIN { @x = kaddr("jiffies"); }`},
	"bswap":       {`BEGIN { @x = bswap((uint16)1) + bswap((uint32)2) + bswap(3); }`},
	"cat":         {`BEGIN { cat("/proc/%d/comm", pid); }`},
	"system":      {`BEGIN { system("echo %d", pid); }`},
	"signal":      {`kprobe:vfs_read { signal("KILL"); }`, `uprobe:libc:malloc { signal("SIGUSR1"); }`},
	"strncmp":     {`BEGIN { @x = strncmp(comm, "bash", 4); }`},
	"count":       {`BEGIN { @x = count(); @y[comm, pid] = count(); }`},
	"sum":         {`BEGIN { @x = sum(3); @y[pid] = sum(-1); }`},
	"avg":         {`BEGIN { @x = avg(3); @y[comm] = avg(pid); }`},
	"min":         {`BEGIN { @x = min(3); @y[1] = min(-4); }`},
	"max":         {`BEGIN { @x = max(3); @y[1] = max(-4); }`},
	"stats":       {`BEGIN { @x = stats(3); @y["a"] = stats(pid); }`},
	"hist":        {`BEGIN { @x = hist(100); @y[pid] = hist(-1, 2); }`},
	"lhist":       {`BEGIN { @x = lhist(50, 0, 100, 10); @y[comm] = lhist(pid, 0, 1000, 100); }`},
	"delete":      {`BEGIN { @m[1] = 1; delete(@m[1]); delete(@m, 1); @n = 1; delete(@n); }`},
	"clear":       {`BEGIN { @m[1] = 1; clear(@m); @c = count(); clear(@c); }`},
	"zero":        {`BEGIN { @m[1] = 1; zero(@m); @h = hist(3); zero(@h); }`},
	"len":         {`BEGIN { @m[1] = 1; @n = len(@m); }`},
	"has_key":     {`BEGIN { @m[1, "a"] = 1; if (has_key(@m, (1, "a"))) { @x = 1; } @y = has_key(@m, (2, "b")); }`},
	"buf":         {`tracepoint:syscalls:sys_enter_read { @x = buf(args.buf, 16); @y = buf(args.comm); }`},
	"ntop":        {`BEGIN { @x = ntop(0x0100007f); @y = ntop(2, 0x0100007f); }`},
	"join":        {`tracepoint:syscalls:sys_enter_read { join(args.buf); join(args.buf, ","); }`},
	"nsecs":       {`BEGIN { @x = nsecs(monotonic) + nsecs(boot) + nsecs(tai); }`},
	"strcontains": {`BEGIN { @x = strcontains(comm, "sh"); }`},
	"kstack":      {`kprobe:vfs_read { @x[kstack(3)] = count(); @y[kstack(perf, 5)] = count(); @z[kstack(raw)] = count(); }`},
	"ustack":      {`uprobe:libc:malloc { @x[ustack(3)] = count(); @y[ustack(perf)] = count(); }`},
	"usym":        {`uprobe:libc:malloc { @x[usym(arg0)] = count(); }`},
	"uaddr":       {`uprobe:libc:malloc { @x = uaddr("environ"); }`},
}

// knownGaps are samples that the checker accepts and codegen can not
// emit, with codegen's error. The test fails when one compiles, so that
// the list stays true.
var knownGaps = map[string]string{}

// fakeOptions checks against the fake kernel, with --unsafe.
func fakeOptions() *sema.Options {
	cfg := sema.DefaultConfig()
	cfg.Unsafe = true
	return &sema.Options{Config: cfg, Expand: fakekernel.Expand, Format: fakekernel.Format,
		KernelType: fakekernel.KernelType, EnumValue: fakekernel.EnumValue, Func: fakekernel.Func,
		Kaddr: fakekernel.Kaddr, HasKprobes: fakekernel.HasKprobes, Traceable: fakekernel.Traceable}
}

// check parses and checks src; the checker must accept it.
func check(t testing.TB, src string, opts *sema.Options) (*sema.Info, *token.File) {
	t.Helper()
	f := token.NewFile("sample.bt", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	info, errs := sema.Check(prog, opts)
	if errs.HasErrors() {
		t.Fatalf("check %q: %v", src, errs)
	}
	return info, f
}

// compile checks src against the fake kernel and compiles it; the
// checker must accept it, and codegen must emit it unless it is a known
// gap, which must still fail as listed.
func compile(t testing.TB, src string, opts *codegen.Options) *codegen.Output {
	t.Helper()
	info, f := check(t, src, fakeOptions())
	o := codegen.Options{NumCPU: 2, File: f}
	if opts != nil {
		o = *opts
		o.File = f
	}
	out, err := codegen.Compile(info, &o)
	gap, known := knownGaps[src]
	switch {
	case err != nil && !known:
		t.Fatalf("the checker accepts %q, and codegen can not emit it: %v", src, err)
	case err != nil && !strings.Contains(err.Error(), gap):
		t.Fatalf("known gap %q fails with %q, want %q", src, err, gap)
	case err != nil:
		return nil
	case known:
		t.Fatalf("known gap %q compiles now: remove it from knownGaps", src)
	}
	return out
}

// kinds are the probe kinds of out's programs.
func kinds(out *codegen.Output) []probe.Kind {
	var ks []probe.Kind
	for _, p := range out.Progs {
		ks = append(ks, p.Prog.Probe.Kind)
	}
	return ks
}

// TestBuiltins compiles every builtin variable of sema's table, in every
// probe kind that allows it.
func TestBuiltins(t *testing.T) {
	testSamples(t, "builtin", sema.BuiltinNames(), builtinSamples, sema.BuiltinKinds)
}

// TestFuncs compiles every builtin function of sema's table.
func TestFuncs(t *testing.T) {
	testSamples(t, "function", sema.FuncNames(), funcSamples, func(string) []probe.Kind { return nil })
}

func testSamples(t *testing.T, what string, names []string, samples map[string][]string, allowed func(string) []probe.Kind) {
	for name := range samples {
		if !slices.Contains(names, name) {
			t.Errorf("samples of %s, which is no %s of sema's table", name, what)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			srcs := samples[name]
			if len(srcs) == 0 {
				t.Fatalf("%s %s has no sample script", what, name)
			}
			covered := map[probe.Kind]bool{}
			for _, src := range srcs {
				t.Run(src, func(t *testing.T) {
					if out := compile(t, src, nil); out != nil {
						for _, k := range kinds(out) {
							covered[k] = true
						}
					}
				})
			}
			for _, k := range allowed(name) {
				if !covered[k] {
					t.Errorf("%s %s has no sample in %s probes", what, name, kindNames[k])
				}
			}
		})
	}
}

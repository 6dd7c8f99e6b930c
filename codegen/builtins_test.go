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
	"nsecs":   {`BEGIN { @x = nsecs; }`, `tracepoint:syscalls:sys_enter_read { @x[tid] = nsecs(monotonic); }`},
	"elapsed": {`interval:s:1 { @x = elapsed / 1000000; }`},
	"cpu":     {`profile:hz:99 { @x[cpu] = count(); }`},
	"comm":    {`BEGIN { @x[comm] = count(); printf("%s\n", comm); }`},
	"kstack":  {`kprobe:vfs_read { @x[kstack] = count(); }`, `BEGIN { print(kstack); }`, `uprobe:libc:malloc { @x[kstack] = count(); }`},
	"args": {
		`tracepoint:syscalls:sys_enter_read { @x = *args.p; @y = args.p->c->a + args.p->d; @z = &args.p->in; printf("%s %s\n", args.filename, args.comm); }`,
		`tracepoint:syscalls:sys_enter_read { @x[args.comm] = sum(args.count); @y = str(args.filename); @z = args.p->in.y; }`,
		`tracepoint:syscalls:sys_exit_read { @x = hist(args.ret); }`,
		`fentry:vfs_read { @x[args.count] = count(); @y = args.file->f_flags; }`,
		`fexit:vfs_read { @x = args.count; }`,
		`rawtracepoint:sched_switch { @x[args.next->pid, args.preempt] = args.prev_state; print(args); }`,
		`uprobe:DWARF_BINARY:two { @x = args.foo->a + *args.n; @y[args] = 1; print(args.foo->b); }`,
	},
	"probe":   {`BEGIN { @x[probe] = count(); }`, `kprobe:vfs_read { printf("%s\n", probe); }`},
	"curtask": {`BEGIN { @x = curtask; }`, `kprobe:vfs_read { @x[curtask] = count(); }`},
	"ppid":    {`BEGIN { @x = ppid; }`, `kprobe:vfs_read { @x[ppid, pid] = count(); }`},
	"pcomm":   {`BEGIN { @x = pcomm; }`, `kprobe:vfs_read { @x[pcomm, comm] = count(); printf("%s\n", pcomm); }`},
	"cgroup":  {`BEGIN { @x = cgroup; }`},
	"rand":    {`BEGIN { @x = rand % 10; }`},
	"cpid":    {`BEGIN { @x = cpid; }`},
	"numaid":  {`BEGIN { @x = numaid; }`},
	"jiffies": {`BEGIN { @x = jiffies; }`},
	"ncpus":   {`BEGIN { @x = ncpus; }`, `interval:s:1 { @x = ncpus * 2; }`},
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
	"ustack":    {`uprobe:libc:malloc { @x[ustack] = count(); }`, `kprobe:vfs_read { @x[ustack] = count(); }`, `tracepoint:syscalls:sys_enter_read { @x[ustack, kstack] = count(); }`},
	"dw_ustack": {`uprobe:libc:malloc { @x[dw_ustack] = count(); }`, `tracepoint:syscalls:sys_enter_read { @x[dw_ustack, kstack] = count(); }`, `BEGIN { print(dw_ustack); }`},
	// The standard library's.
	"ctx":         {`BEGIN { @x = ctx; }`, `kprobe:vfs_read { @x = *(uint64 *)ctx; }`},
	"username":    {`BEGIN { @x[username] = count(); printf("%s\n", username); }`},
	"usermode":    {`BEGIN { @x = usermode; }`, `kprobe:vfs_read { @x = usermode; }`, `uprobe:libc:malloc { @x = usermode; }`, `profile:hz:99 { @x[usermode] = count(); }`, `tracepoint:syscalls:sys_enter_read { @x = usermode; }`},
	"probetype":   {`BEGIN { @x = probetype; }`, `kprobe:vfs_read { @x[probetype] = count(); }`},
	"leader_comm": {`BEGIN { @x = leader_comm; }`, `kprobe:vfs_read { @x[leader_comm(curtask)] = count(); }`},
	"leader_tid":  {`BEGIN { @x = leader_tid; }`, `kprobe:vfs_read { @x = leader_tid(curtask); }`},
}

// funcSamples holds scripts calling each builtin function, by name.
var funcSamples = map[string][]string{
	"printf":   {`BEGIN { printf("%d %s %x %-5u|%c\n", pid, comm, 255, 7, 65); }`, `tracepoint:syscalls:sys_enter_read { printf("%s %r %p %lld %hhu %s\n", args.comm, buf(args.buf, 4), args.buf, args.count, 300, kstack); }`, `usdt:prog:gtest:probe { printf("%d %s\n", arg1, str(arg1)); }`, `BEGIN { printf("%s %s %s\n", ntop(1), strftime("%H", nsecs), usym(1)); }`},
	"print":    {`BEGIN { @m[1] = 2; print(@m); print(@m, 1, 1); print((1, "a")); print(5); }`, `BEGIN { @h = hist(3); print(@h); @s[1] = stats(2); print(@s); @l = lhist(1, 0, 10, 2); print(@l); print(kstack); print(ustack); print(comm); }`},
	"time":     {`BEGIN { time(); time("%H:%M:%S\n"); }`, `interval:s:1 { time("%Y %f\n"); }`},
	"strftime": {`BEGIN { printf("%s\n", strftime("%H:%M:%S", nsecs)); @x = strftime("%s", nsecs(tai)); }`, `BEGIN { @x[strftime("%Y-%m-%d %H:%M:%S.%f", nsecs)] = count(); }`},
	"exit":     {`BEGIN { exit(); }`, `interval:s:1 { exit(2); }`, `tracepoint:syscalls:sys_enter_read { if (args.count > 10) { exit(1); } @x = 1; }`},
	"str":      {`tracepoint:syscalls:sys_enter_read { @x = str(args.buf); @y = str(args.buf, 8); }`, `BEGIN { @x[str(0)] = count(); $s = str(0, 4); printf("%s\n", $s); }`, `fentry:vfs_read { @x = str(args.buf, args.count); }`},
	"ksym":     {`kprobe:vfs_read { @x[ksym(arg0)] = count(); }`, `kretprobe:vfs_read { printf("%s\n", ksym(retval)); }`},
	"kaddr":    {`BEGIN { @x = kaddr("jiffies"); }`, `BEGIN { @x = *kaddr("jiffies"); }`},
	"bswap":    {`BEGIN { @x = bswap((uint16)1) + bswap((uint32)2) + bswap(3); }`, `BEGIN { @x = bswap((int16)-1); @y = bswap((int64)-1); }`},
	"cat":      {`BEGIN { cat("/proc/%d/comm", pid); }`, `BEGIN { cat("/proc/%d/%s", pid, "comm"); cat("/etc/hostname"); }`},
	"system":   {`BEGIN { system("echo %d", pid); }`, `tracepoint:syscalls:sys_enter_read { system("echo %s %d %s", comm, args.count, str(args.buf)); }`},
	"signal":   {`kprobe:vfs_read { signal("KILL"); }`, `uprobe:libc:malloc { signal("SIGUSR1"); }`},
	"strncmp":  {`BEGIN { @x = strncmp(comm, "bash", 4); }`, `tracepoint:syscalls:sys_enter_read { if (strncmp(str(args.buf), args.comm, 16) == 0) { @x = 1; } }`},
	"count":    {`BEGIN { @x = count(); @y[comm, pid] = count(); }`, `BEGIN { @x[kstack, ustack] = count(); @y[probe, cpu] = count(); @z[(1, "a")] = count(); }`},
	"sum":      {`BEGIN { @x = sum(3); @y[pid] = sum(-1); }`},
	"avg":      {`BEGIN { @x = avg(3); @y[comm] = avg(pid); }`, `BEGIN { @x = avg(-3); print(@x); }`},
	"min":      {`BEGIN { @x = min(3); @y[1] = min(-4); }`, `BEGIN { @x[comm] = min(pid); print(@x); }`},
	"max":      {`BEGIN { @x = max(3); @y[1] = max(-4); }`},
	"stats":    {`BEGIN { @x = stats(3); @y["a"] = stats(pid); }`},
	"hist":     {`BEGIN { @x = hist(100); @y[pid] = hist(-1, 2); }`, `BEGIN { @x = hist(-5, 0); @y[1, 2] = hist(7, 5); }`},
	"lhist":    {`BEGIN { @x = lhist(50, 0, 100, 10); @y[comm] = lhist(pid, 0, 1000, 100); }`, `BEGIN { @x = lhist(-5, 0, 10, 3); }`},
	"tseries": {`BEGIN { @x = tseries(pid, 1s, 10); @y[comm] = tseries(-1, 100ms, 5, "avg"); }`,
		`BEGIN { @a = tseries(1, 1ms, 3, "min"); @b[1, 2] = tseries((uint64)2, 1us, 4, "max"); @c = tseries(3, 10, 1, "sum"); zero(@c); clear(@a); }`},
	"delete":      {`BEGIN { @m[1] = 1; delete(@m[1]); delete(@m, 1); @n = 1; delete(@n); }`, `BEGIN { @c[1] = count(); delete(@c[1]); @h[1] = hist(2); delete(@h, 1); @t[1, "a"] = 2; delete(@t, (1, "a")); }`},
	"clear":       {`BEGIN { @m[1] = 1; clear(@m); @c = count(); clear(@c); }`, `BEGIN { @h = hist(3); clear(@h); @l[1] = lhist(1, 0, 10, 1); clear(@l); }`},
	"zero":        {`BEGIN { @m[1] = 1; zero(@m); @h = hist(3); zero(@h); }`, `BEGIN { @s = stats(1); zero(@s); @a[1] = avg(2); zero(@a); @c = count(); zero(@c); }`},
	"len":         {`BEGIN { @m[1] = 1; @n = len(@m); }`, `BEGIN { @c[comm] = count(); @n = len(@c); @s[1] = sum(1); $n = len(@s); }`},
	"has_key":     {`BEGIN { @m[1, "a"] = 1; if (has_key(@m, (1, "a"))) { @x = 1; } @y = has_key(@m, (2, "b")); }`, `BEGIN { @c[1] = count(); @x = has_key(@c, 1); }`},
	"buf":         {`tracepoint:syscalls:sys_enter_read { @x = buf(args.buf, 16); @y = buf(args.comm); }`, `BEGIN { printf("%r\n", buf("abcdef", 3)); @x[buf("ab")] = count(); }`},
	"ntop":        {`BEGIN { @x = ntop(0x0100007f); @y = ntop(2, 0x0100007f); }`, `tracepoint:syscalls:sys_enter_read { @x[ntop(args.fd)] = count(); }`},
	"join":        {`tracepoint:syscalls:sys_enter_read { join(args.buf); join(args.buf, ","); }`, `kprobe:vfs_read { join(arg1, " "); }`},
	"nsecs":       {`BEGIN { @x = nsecs(monotonic) + nsecs(boot) + nsecs(tai); }`},
	"strcontains": {`BEGIN { @x = strcontains(comm, "sh"); }`, `tracepoint:syscalls:sys_enter_read { if (strcontains(str(args.buf), args.comm)) { @x = count(); } }`},
	"kstack":      {`kprobe:vfs_read { @x[kstack(3)] = count(); @y[kstack(perf, 5)] = count(); @z[kstack(raw)] = count(); }`},
	"ustack":      {`uprobe:libc:malloc { @x[ustack(3)] = count(); @y[ustack(perf)] = count(); }`},
	"dw_ustack":   {`uprobe:libc:malloc { @x[dw_ustack(3)] = count(); @y[dw_ustack(perf, 127)] = count(); printf("%s %d\n", dw_ustack(raw), len(dw_ustack)); }`},
	"usym":        {`uprobe:libc:malloc { @x[usym(arg0)] = count(); }`, `uretprobe:libc:malloc { printf("%s\n", usym(retval)); @x[usym(retval)] = count(); }`},
	"uaddr":       {`uprobe:libc:malloc { @x = uaddr("environ"); }`, `uretprobe:libc:malloc { @x = *(uint64 *)uaddr("environ"); }`},

	"pton":          {`BEGIN { @x = (uint32)pton("127.0.0.1"); printf("%s\n", ntop(pton("::1"))); $a = pton("10.1.2.3"); @y = $a[3]; }`},
	"macaddr":       {`BEGIN { @x = macaddr(pton("1:2:3::")); @y[macaddr(0)] = 1; }`, `tracepoint:syscalls:sys_enter_read { printf("%s\n", macaddr(args.comm)); @x = macaddr(args.buf); }`},
	"cgroup_path":   {`BEGIN { print(cgroup_path(cgroup)); @x = cgroup_path(1, "unified"); printf("%s\n", cgroup_path(cgroup, "*")); }`},
	"percpu_kaddr":  {`kprobe:vfs_read { @x = *percpu_kaddr("process_counts"); $p = percpu_kaddr("process_counts", 1); if ($p != 0) { @y = *$p; } }`, `kprobe:vfs_read { $t = (struct task_struct *)percpu_kaddr("process_counts", cpu); if ($t != 0) { @x = $t.pid; } }`},
	"socket_cookie": {`rawtracepoint:tcp_probe { @x[socket_cookie((struct sock *)arg0)] = count(); }`, `kprobe:vfs_read { @x = socket_cookie((struct sock *)arg1); }`, `fentry:tcp_v4_connect { @x[socket_cookie(args.sk)] = count(); }`},
	"skboutput":     {`rawtracepoint:consume_skb { @x = skboutput("/dev/null", (struct sk_buff *)arg0, 100, 14); }`, `tracepoint:syscalls:sys_enter_read { $r = skboutput("/dev/null", (struct sk_buff *)args.buf, args.count, 0); }`},
	"write_user":    {`kprobe:vfs_read /pid == 0/ { @x = write_user(arg1, "x", 1); }`, `kprobe:vfs_read { if (write_user(arg1, pton("1.2.3.4"), arg2)) { @x = 1; } }`},
	"reg":           {`kprobe:vfs_read { @x = reg("ip") + reg("sp"); }`, `uprobe:libc:malloc { @x[usym(reg("ip"))] = count(); }`},
	"errorf":        {`BEGIN { errorf("bad %d %s", pid, comm); }`},
	"warnf":         {`tracepoint:syscalls:sys_enter_read { warnf("%d %s", args.count, str(args.buf)); }`},
	"debugf":        {`BEGIN { debugf("debugf %s %d %x", "a", 1, pid); debugf("none"); }`},
	// The standard library's.
	"pid":          {`BEGIN { @x = pid() + pid(curr_ns) + pid(init); }`, `kprobe:vfs_read { @x[pid(init)] = count(); }`},
	"tid":          {`BEGIN { @x = tid() + tid(curr_ns) + tid(init); }`},
	"comm":         {`BEGIN { @x = comm(); }`, `iter:task { @x[comm(pid)] = count(); }`, `tracepoint:syscalls:sys_enter_read { @x = comm(args.fd); }`},
	"strlen":       {`BEGIN { @x = strlen(comm) + strlen("abc"); }`, `tracepoint:syscalls:sys_enter_read { @x = strlen(args.buf); }`},
	"strerror":     {`BEGIN { @x = strerror(22); print(strerror(-1)); }`, `kretprobe:vfs_read { @x[strerror(retval)] = count(); }`},
	"signal_name":  {`BEGIN { @x = signal_name(9); }`, `tracepoint:syscalls:sys_enter_read { @x[signal_name(args.fd)] = count(); }`},
	"syscall_name": {`BEGIN { @x = syscall_name(0); }`, `tracepoint:syscalls:sys_enter_read { @x[syscall_name(args.count)] = count(); }`},
	"strstr":       {`BEGIN { @x = strstr(comm, "sh"); }`, `tracepoint:syscalls:sys_enter_read { @x = strstr(str(args.buf), args.comm); }`},
	"str_concat":   {`BEGIN { @x = str_concat(comm, "-x"); $s = str_concat("a", str_concat("b", "c")); print($s); }`},
	"memcmp":       {`BEGIN { @x = memcmp(comm, "bash", 4); $a = (1, 2); @y = memcmp($a, (1, 3), 16); }`},
	"assert":       {`BEGIN { assert(pid > 0, "a pid"); }`, `kprobe:vfs_read { assert(arg2 < 100, "small"); @x = 1; }`},
	"find": {`BEGIN { @m[1] = (1, "hello"); let $v; if (find(@m, 1, $v)) { print($v); } }`,
		`BEGIN { @m[1, "a"] = "bb"; $s = "longer"; @x = find(@m, (2, "cc"), $s); @n[2] = (uint16)3; $i = (int16)1; find(@n, 2, $i); @y = $i; }`},
	"override":      {`kprobe:vfs_read { override(-22); }`, `kprobe:vfs_read /arg2 > 10/ { override(arg2); }`},
	"path":          {`fentry:security_file_open { @x = path(&args.file->f_path); }`, `fexit:security_file_open { print(path(args.file->f_path, 32)); }`},
	"unwatch":       {`watchpoint:0x10000000:8:w { unwatch(0x10000000); } watchpoint:0x10000040:1:x { @n++; }`, `kprobe:vfs_read { unwatch(arg0); }`},
	"signal_thread": {`kprobe:vfs_read { signal_thread("KILL"); }`, `tracepoint:syscalls:sys_enter_read { signal_thread(args.fd); }`, `uprobe:libc:malloc { signal_thread(10); }`},
}

// exprSamples combine builtins with the rest of the language: kernel
// types, C definitions, loops, tuples, strings and casts.
var exprSamples = []string{
	`BEGIN { $p = (struct pair *)0; @x = $p->d + $p->in.y + $p->c->b; @y = $p->in; print(*$p); @z = PAIR_B + sizeof(struct pair) + offsetof(struct pair, in.y); }`,
	"struct s { int a; long b; }; BEGIN { $p = (struct s *)0; @x = $p->b; }",
	`BEGIN { @m[1] = 2; for ($kv : @m) { printf("%d %d\n", $kv.0, $kv.1); } for ($i : 0..5) { @s += $i; } $j = 0; while ($j < 10) { $j++; if ($j == 5) { continue; } } unroll(3) { @u++; } }`,
	`BEGIN { @x = pid > 1 ? "a" : "bc"; if (comm == "bash") { @y = 1; } $t = (1, "a", (2, "b")); print($t.2.1); @t = $t; }`,
	`tracepoint:syscalls:sys_enter_read /str(args.buf) != args.comm && args.count > 0/ { @x = (int8)args.count + (uint16)args.fd * 3 - (int64)args.count / 7 % 3; @y[args.comm, args.fd] = args.count << 2 | 1 ^ 3 & 5; }`,
	`BEGIN { @m[1] = 1; for ($kv : @m) { printf("%d\n", $kv.1); cat("/x"); system("x"); time(); print(@m); delete(@m, $kv.0); @n[$kv.0] = count(); @l = len(@m); signal("KILL"); exit(); } }`,
	`BEGIN { @a[1] = 1; @b[2] = 2; for ($kv : @a) { for ($kw : @b) { @c[$kv.0, $kw.0] = 1; if ($kw.1 > 1) { break; } } return; } }`,
	`tracepoint:syscalls:sys_enter_read { @x = kstack; @y = (ustack(3), "a"); @[args.p->in] = count(); $v = *args.p; print($v); }`,
	`BEGIN { $a = 1; $a += 2; $a -= 1; $a *= 3; $a /= 2; $a %= 5; $a <<= 1; $a >>= 1; $a &= 7; $a |= 8; $a ^= 1; @a = $a; @b++; @b--; @b += 5; @c[1] *= 2; }`,
	`kprobe:vfs_read { @c = count(); @s[pid] = sum(arg2); @m = min(arg2); @x[1] = max(arg2); @a = avg(arg2); if (@c > 10) { print((@c, @s[pid], @m, @x[1], @a, (bool)@c)); } }`,
	`BEGIN { $p = (int32 *)curtask; $p += 2; $p++; if ($p) { @p = $p; } $v = 5; $q = &$v; @q = *$q; @n = 0; $e = @n ?: 7; _ = delete(@p); $b = (int8[])12345; $i = (uint32)(uint8[4])1; $s = "ab"; @c = $s[1] + $b[0] + $i; $t = (x = 1, y = "s"); $t = (y = "t", x = 2); print($t); $e ? printf("a") : printf("b"); let $w: typeof($e) = 1; @w = $w; @bq = buf("ab", 2) == buf("cd", 2); $tt = (1, "x"); print(*&$tt); @dz = 5 / @n; }`,
}

// knownGaps are samples that the checker accepts and codegen can not
// emit, with codegen's error. The test fails when one compiles, so that
// the list stays true. None is known today.
var knownGaps = map[string]string{}

// fakeOptions checks against the fake kernel, with --unsafe.
func fakeOptions() *sema.Options {
	cfg := sema.DefaultConfig()
	cfg.Unsafe = true
	return &sema.Options{Config: cfg, Expand: fakekernel.Expand, Format: fakekernel.Format,
		KernelType: fakekernel.KernelType, EnumValue: fakekernel.EnumValue, Func: fakekernel.Func,
		Kaddr: fakekernel.Kaddr, KernelVar: fakekernel.KernelVar, HasKprobes: fakekernel.HasKprobes, Traceable: fakekernel.Traceable,
		UnwindTarget: true}
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
	info, f := check(t, withDwarfBinary(t, src), fakeOptions())
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

// TestExprs compiles the expression samples.
func TestExprs(t *testing.T) {
	for _, src := range exprSamples {
		t.Run(src, func(t *testing.T) { compile(t, src, nil) })
	}
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

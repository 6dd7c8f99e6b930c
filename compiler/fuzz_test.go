package compiler_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gtrace/bench"
	"gtrace/compiler"
	"gtrace/lang/diag"
)

// FuzzCompile runs the whole pipeline, preprocessor to code generation,
// on the fake kernel: it must never panic, and its errors must be
// diagnostics inside the source.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`BEGIN { @x = @x; }`,
		`BEGIN { has_key(@m, 1); delete(@m, 1); }`,
		`BEGIN { return; @x = 1; }`,
		`BEGIN { while (1) { continue; } }`,
		`BEGIN { $s = 64; @x = 1 << $s; @y = -8 >> $s; @z = bswap((uint8)1); }`,
		`BEGIN { @m[1, "a"] = 2; for ($kv : @m) { if ($kv.1 > 1) { break; } @n[$kv.0] = len(@m); } }`,
		`BEGIN { for ($i : 0..3) { if ($i == 2) { return; } @c = count(); } print(@c); clear(@c); }`,
		`interval:s:1 { @h = hist(5); @l = lhist(3, 0, 10, 1); @s = stats(2); printf("%d %s\n", pid, comm); exit(); }`,
		`BEGIN { $t = (1, "two"); @t = $t; print($t.1); unroll(2) { @u++; } @b = strcontains("abc", "b"); }`,
		"#define N 4\nconfig = { max_strlen = 32 }\ntracepoint:syscalls:sys_enter_read /args->fd > N/ { @[comm] = sum(args->count); }",
		`tracepoint:syscalls:sys_exit_read { @r = hist(args->ret); @t[tid] = nsecs; } END { print(@r, 3); zero(@t); }`,
		`kprobe:vfs_read { @[kstack, func] = count(); } kretprobe:vfs_read { @ret = lhist(retval, 0, 100, 10); }`,
		`fentry:vfs_read { @[args.file] = count(); } fexit:vfs_write { @w = stats(retval); }`,
		`rawtracepoint:sched_switch { @[arg0, arg1] = sum(1); } usdt:/bin/true:p:probe { @u = avg(arg0); }`,
		`uprobe:libc:malloc { @s[ustack] = count(); } uretprobe:libc:malloc { @r = max(retval); }`,
		`struct pair *p; kprobe:vfs_read { $p = (struct pair *)arg0; @[$p->a, PAIR_B] = count(); @j = *kaddr("jiffies"); }`,
		`software:cpu-clock:100000 { @c[cpu] = count(); } self:signal:SIGUSR1 { print(ncpus); }`,
		`BEGIN { $x = { let $a = 1; $a + 1 }; @m[{ "k" }] = ({ 2 }, { exit(); 3 }); $n = { $b = 1; }; }`,
		`macro inc($x) { $x += 1; $x } macro set(@m, k) { @m[k] = inc(k); } macro d(x) { x + x } macro one() { 1 }
		 BEGIN { $a = one; set(@s, $a); print(d(d(inc($a)))); inc(@s); one(2); } macro r() { r() } END { r; }`,
		`enum { A = 1, B }; enum E { X = 5 }; struct s { int a; char b } __attribute__((packed)) BEGIN { $e = (enum E)5; print((A, $e)); $r = (x = 1, y = "s"); $r = (y = "t", x = B); print($r.y); }`,
		`BEGIN { $p = (int32 *)0; $p += 2; $p++; $v = 7; $q = &$v; _ = *$q ?: 1; @a = (int8[])12345; @b = (uint32)(uint8[4])1; @c = (bool[2])(uint16)1; return $v; }`,
		`macro sz(t) { sizeof(t) + sizeof(t[2]) } BEGIN { let $x: typeof(size_t) = 1; print(sz(typeof(uint16 *))); print((typeof($x))3); @n = count(); if (@n > 1) { @m = (bool)@n; } }`,
		`BEGIN { @t = tseries(pid, 1s, 5); @u[comm, 1] = tseries(-1, 10ms, 3, "max"); zero(@t); clear(@u); } bench:a { @v = tseries(1, 1us, 2, "avg"); exit(); }`,
		`let @a = lruhash(10); let @b = percpuarray(4); BEGIN { @a[1] = 1; @b[0] = count(); @c = { let $z = 5; avg($z) }; print(ppid, pcomm); 1 ? printf("a") : printf("b"); }`,
		`BEGIN { @t = tseries(1, 0, 5); @u = tseries(1, 1s, 0, "min"); @v = tseries("s", 1s, 2); } bench:b { $x = 1; }`,
		`BEGIN { @a = getopt("aa", 20); @b = getopt("b"); @c = getopt("cc", "hi", "desc"); @d = config.max_strlen + config().on_stack_limit; print(config.stack_mode); @e = getopt(""); }`,
		`BEGIN { $s = "abc"; @l = strlen($s) + strlen(""); print(strerror(2)); print(str_concat(str_concat("a", $s), "b")); assert(1 == 1, "ok"); static_assert(1, "m"); @i = (is_array($s), is_integer(1), is_literal(-1), is_ptr(0), is_str($s), is_unsigned_integer(1u)); }`,
		`struct W { int a; int b[4]; }; BEGIN { $p = (struct W *)0; $q = container_of(&$p->b, struct W, b); @o = offsetof(struct W, b) + offsetof(*$p, a); print(strstr("abc", "c")); @m = memcmp("ab", "ac", 2); @c = strcap("x"); }`,
		`BEGIN { $a = pton("1.2.3.4"); $b = pton("::1"); print(ntop($a)); print(macaddr($a)); print(cgroup_path(cgroup, "unified")); $k = percpu_kaddr("runqueues", 0); print(socket_cookie(0)); }`,
		`kprobe:vfs_read { $r = reg("ip"); $s = skboutput("x.pcap", (struct sk_buff *)arg0, 10, 0); errorf("e %d", pid); warnf("w %s", comm); debugf("d"); }`,
		`BEGIN { errorf(); warnf(1); debugf("%d %d", 1); fail("no %d", 2); reg(""); pton(""); macaddr(1); strerror("x"); str_concat(); assert(); }`,
		`watchpoint:0x10000000:8:w { @w = count(); } w:0x1000:4:rw { print(func); } uprobe:/bin/true:main { @a = arg0; }`,
		`BEGIN { $x = if (pid > 1) { 1 } else if (pid) { 2 } else { 3 }; @y = if (1) { "a" } else { "b" }; $z = { if (0) { (1, 2) } else { (3, 4) } }; }`,
		`BEGIN { $a = 255; $b = 65536; $c = 4294967296; $d = -129; $e = 0xffffffffffffffff; $f = -9223372036854775808; @t = ((int8)1, (int64)2, "s", (uint16)3); print(@t); }`,
		`struct Y { int y[2][3]; char c[0]; } BEGIN { $a = (int32[4])"abcdefghijklmno"; $i = 3; @x = $a[$i + 1]; $p = (struct Y *)0; @y = $p->y[$i][1] + $p->y[1][$i] + $p->c[$i]; $s = "abc"; @z = $s[$i]; @w = $a[-1]; }`,
		`tracepoint:syscalls:sys_enter_$1 { @[$2] = count(); } kprobe:$3 { } uprobe:$4:$5 { } interval:s:$6 { exit(); }`,
		`BEGIN { let $a: int32[99999999999]; $b = $a; } struct S { int a[99999999999]; } END { $p = (struct S *)0; $x = $p->a; @m[$p->a] = $p->a == $p->a; }`,
		`import "x.bt"; import ""; BEGIN { __builtin_strlen("a"); __builtin_config.max_map_keys; __builtin_getopt("z", 1); }`,
		`macro m(x) { strlen(x) + is_literal(x) } macro n($v) { str_concat($v, "x") } BEGIN { $s = "a"; @a = m("b"); @b = n($s); for ($i : 0..2) { @c[$i] = m($s); } } END { print(if (1) { m("") } else { 0 }); }`,
	} {
		f.Add(s)
	}
	for _, ol := range bench.OneLiners {
		f.Add(ol.Src)
	}
	scripts, _ := filepath.Glob("../tools/*/*.bt")
	for _, path := range scripts {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, err := compiler.Compile([]byte(src), &compiler.Options{Check: fakeKernel, Codegen: fakeCodegen})
		if err == nil {
			return
		}
		var located *compiler.Error
		if !errors.As(err, &located) {
			t.Fatalf("error %v of %q is no diagnostic", err, src)
		}
		for _, e := range located.Diags {
			checkSpan(t, src, e)
		}
	})
}

// checkSpan fails t when e points outside the source; diagnostics in
// included files, and those with no place, are not in it.
func checkSpan(t *testing.T, src string, e *diag.Error) {
	t.Helper()
	if e.File != nil || e.Span.Start < 0 && e.Span.End < 0 {
		return
	}
	if e.Span.Start < 0 || int(e.Span.End) > len(src) || e.Span.Start > e.Span.End {
		t.Fatalf("error %q has span %v outside the source %q", e.Msg, e.Span, src)
	}
}

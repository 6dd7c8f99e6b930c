package sema

import (
	"testing"

	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// FuzzCheck feeds the checker whatever the parser accepts: it must never
// panic, and must either succeed or say why.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`BEGIN { printf("%d %s\n", pid, comm); exit(); }`,
		`tracepoint:syscalls:sys_enter_read /args.count > 1/ { @[comm, pid] = hist(args.count); }`,
		`BEGIN { $i = 0; while ($i < 10) { $i++; if ($i == 5) { break; } } @x = $i ? "a" : "b"; }`,
		`BEGIN { @a = lhist(5, 0, 10, 1); @b = stats(1); @c[1, "x"] = avg(2); delete(@c, (1, "x")); clear(@a); }`,
		`BEGIN { $t = (1, "two", (3, 4)); @t = $t; print($t.2); print(@t); }`,
		`interval:s:1 { @ = count(); print(@, 10, 2); zero(@); }`,
		`BEGIN { @x += 1; @x++; --@x; $y -= 2; $y <<= 1; }`,
		`BEGIN { unroll(3) { @u = sizeof(int32); } exit((int8)-1); }`,
		`BEGIN { unroll(100) { unroll(100) { unroll(100) { @x++; } } } unroll(2) { $y = 1; } }`,
		`BEGIN { printf("%-999999999d %.70000s %%%\n", 1, "a"); }`,
		`BEGIN { $p = (struct pair *)0; @x = $p->in.y + $p->c->a + offsetof(struct pair, b) + PAIR_B; $q = &$p->in; print(*$q); }`,
		`BEGIN { for ($kv : @m) { @n[$kv.0] = len(@m); } for ($i : 0..3) { printf("%s
", strftime("%H", nsecs)); } @m[1] = 2; }`,
		`config = { unstable_tseries = enable } BEGIN { @t = tseries(1, 1s, 5); @u[1] = tseries(-1, 10ms, 3, "avg"); } bench:a { @x = getopt("o", 2) + config.max_strlen; }`,
		`BEGIN { $s = "ab"; @l = strlen($s); @e = strerror(2); @c = str_concat($s, "c"); assert(1, "x"); @i = (is_str($s), is_literal(1), is_ptr(0)); }`,
		`BEGIN { $a = pton("1.2.3.4"); @m = macaddr($a); @p = cgroup_path(1, "x"); errorf("%d", 1); warnf("w"); debugf("d"); fail("f"); reg("ip"); }`,
		`BEGIN { $x = if (pid) { 1 } else { 2 }; $a = (int8[4])1; $i = 2; @v = $a[$i]; $s = "abc"; @w = $s[$i]; let $big: int32[99999999999]; }`,
		`watchpoint:0x1000:8:w { @w = count(); } tracepoint:syscalls:sys_enter_$1 { @[$2] = 1; } uprobe:$3:main { }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file := token.NewFile("fuzz", []byte(src))
		prog, errs := parser.ParseFile(file)
		if errs.HasErrors() {
			return
		}
		cfg := DefaultConfig()
		info, errs := Check(prog, fakeOptions(cfg))
		if info == nil && len(errs) == 0 {
			t.Fatalf("no info and no errors for %q", src)
		}
		for _, e := range errs {
			if e.Warning && e.Span.Start < 0 && e.Span.End < 0 {
				continue // such as the unstable feature warning, which bpftrace places nowhere
			}
			if e.Span.Start < 0 || int(e.Span.End) > len(src) || e.Span.Start > e.Span.End {
				t.Fatalf("error %q has span %v outside the source %q", e.Msg, e.Span, src)
			}
		}
	})
}

package sema

import (
	"strings"
	"testing"

	"gtrace/internal/fakekernel"
	"gtrace/lang/ast"
	"gtrace/lang/parser"
	"gtrace/lang/token"
)

// fakeOptions checks with cfg against the fake kernel, without root.
func fakeOptions(cfg Config) *Options {
	return &Options{Config: cfg, Expand: fakekernel.Expand, Format: fakekernel.Format,
		KernelType: fakekernel.KernelType, EnumValue: fakekernel.EnumValue, Func: fakekernel.Func,
		Kaddr: fakekernel.Kaddr, KernelVar: fakekernel.KernelVar, HasKprobes: fakekernel.HasKprobes, Traceable: fakekernel.Traceable}
}

func check(t *testing.T, src string, unsafe bool) (*Info, string) {
	t.Helper()
	f := token.NewFile("stdin", []byte(src))
	prog, errs := parser.ParseFile(f)
	if errs.HasErrors() {
		t.Fatalf("parse %q: %v", src, errs)
	}
	cfg := DefaultConfig()
	cfg.Unsafe = unsafe
	cfg.Params = []string{"7", "text"}
	cfg.Unstable = map[string]string{"unstable_tseries": "enable"} // no warning of its use
	info, errs := Check(prog, fakeOptions(cfg))
	if len(errs) == 0 {
		return info, ""
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Msg
	}
	return info, strings.Join(msgs, "\n")
}

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{`BEGIN { foo(); }`, "Unknown function: foo"},
		{`BEGIN { printf("%d\n", bar); }`, "Unknown identifier: 'bar'"},
		{`BEGIN { printf("%d\n", $x); }`, "Undefined or undeclared variable: $x"},
		{`BEGIN { @x = 1; @x = "s"; }`, "Type mismatch for @x: trying to assign value of type 'string[2]' when map already contains a value of type 'int8'"},
		{`BEGIN { @g[1, "hi"] = 2; $x = has_key(@g, (1, 2)); }`, "Argument mismatch for @g: trying to access with arguments: '(int8,int8)' when map expects arguments: '(int8,string[3])'"},
		{`BEGIN { @x[1] = 1; @x["a"] = 2; }`, "Argument mismatch for @x: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'"},
		{`BEGIN { $x = count(); }`, "count() should be directly assigned to a map"},
		{`BEGIN { count(); }`, "count() should be directly assigned to a map"},
		{`BEGIN { system("ls"); }`, "system() is an unsafe function being used in safe mode"},
		{`BEGIN { signal("KILL"); }`, "signal() is an unsafe function being used in safe mode"},
		{`BEGIN { printf("%d %d\n", 1); }`, "printf: Not enough arguments for format string (1 supplied, 2 expected)"},
		{`BEGIN { printf("%d\n", "s"); }`, "printf: Unsupported format specifier for type 'string[2]': d"},
		{`BEGIN { printf("%s\n", args.fd); }`, "The args builtin can not be used with 'begin' probes"},
		{`tracepoint:syscalls:sys_enter_read { @ = args.nope; }`, "Can't find a field nope in tracepoint:syscalls:sys_enter_read"},
		{`BEGIN { @h = hist(1, 9); }`, "hist: bits must be a constant between 0 and 5"},
		{`BEGIN { @l = lhist(1, 0, 10, 0); }`, "lhist: step must be positive"},
		{`BEGIN { break; }`, "'break' statement is not allowed outside of a loop"},
		{`BEGIN { print(@nothing); }`, "Undefined map: @nothing"},
		{`BEGIN { @a = count(); $x = @a; @h = hist(1); $y = @h; }`, "The value of @h, a hist() aggregation, can only be printed"},
		{`BEGIN { unroll(0) { } }`, "unroll minimum value is 1"},
		{`BEGIN { unroll(101) { } }`, "unroll maximum value is 100"},
		{`BEGIN { let $a; }`, "Could not resolve the type of this variable"},
		{`BEGIN { $t = (a=1, a=2); }`, "Record has a duplicate field: a"},
		{`BEGIN { $t = (a=1); $x = $t.b; }`, "Record has no field named 'b'"},
		{`BEGIN { $t = (a=1, b=2); $t = (a=1, c=2); }`, "Type mismatch for $t: trying to assign value of type '(a=int8,c=int8)' when variable already contains a value of type '(a=int8,b=int8)'"},
		{`BEGIN { $t = (a=1, b=2); $t = (1, 2); }`, "Type mismatch for $t: trying to assign value of type '(int8,int8)' when variable already contains a value of type '(a=int8,b=int8)'"},
		{`BEGIN { $s = "ab"; $c = $s[3]; }`, "the index 3 is out of bounds for array of size 3"},
		{`BEGIN { @g = 2; if (has_key(@g, 2)) { } }`, "call to has_key() expects a map with explicit keys (non-scalar map)"},
		{`BEGIN { @ = 0; $n = len(@); }`, "call to len() expects a map with explicit keys (non-scalar map)"},
		{`BEGIN { $t = (1, 2); $t.5; }`, "Invalid tuple index: 5. Found 2 elements in tuple."},
		{`BEGIN { exit(1, 2); }`, "exit() takes up to 1 arguments (2 provided)"},
		{`BEGIN { @h[1] = hist(1); for ($kv : @h) { } }`, "A for loop can not iterate over @h: maps of hist() are not supported"},
		{`BEGIN { @x = 1; for ($kv : @x) { } }`, "@x has no keys: a for loop needs a map with keys"},
		{`BEGIN { for ($kv : @none) { } }`, "Undefined map: @none"},
		{`BEGIN { @x = @x; }`, "Undefined map: @x"},
		{`BEGIN { $a = @y * 2; }`, "Undefined map: @y"},
		{`BEGIN { if (@y == 0) { } }`, "Undefined map: @y"},
		{`BEGIN { _ = has_key(@m, 1); }`, "Undefined map: @m"},
		{`BEGIN { @m[1] = 1; has_key(@m, 1); }`, "Return value discarded."},
		{`BEGIN { @m[1] = 1; $x = 1; $x++; @m[1]++; delete(@m, 1); _ = 1 + 2; }`, ""},
		{`BEGIN { return "x"; }`, "Expected an integer, got 'string[2]'"},
		{`BEGIN { $p = (int32 *)0; $p *= 2; }`, "The *= operator can not be applied to a pointer; only += and -= move it"},
		{`BEGIN { $x = "a" ?: "b"; }`, "Invalid condition: expected an integer, a bool or a pointer, got 'string[2]'"},
		{`BEGIN { delete(@m, 1); }`, "Undefined map: @m"},
		{`BEGIN { delete(@m[1]); }`, "Undefined map: @m"},
		{`BEGIN { zero(@m); }`, "Undefined map: @m"},
		{`BEGIN { $n = len(@m); }`, "Undefined map: @m"},
		{`BEGIN { $a = @m[1]; }`, "Undefined map: @m"},
		{`BEGIN { @m[1] = 1; delete(@m, "a"); }`, "Argument mismatch for @m: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'"},
		{`BEGIN { @m = 1; delete(@m, 1); }`, "Argument mismatch for @m: trying to access with arguments: 'int8' when map expects arguments: ''"},
		{`BEGIN { @x = nosuch(); }`, "Unknown function: nosuch"},
		{`BEGIN { return; @x = 1; @y = 2; }`, "Unreachable statement."},
		{`BEGIN, END { return; foo(); }`, "Unreachable statement.\nUnknown function: foo"},
		{`BEGIN { if (pid) { return; } else { break; } @x = 1; }`, "'break' statement is not allowed outside of a loop\nUnreachable statement."},
		{`BEGIN { while (1) { if (pid) { continue; } else { break; } } unroll(2) { return; } @x = 1; }`, "Unreachable statement."},
		{`BEGIN { if (pid) { return; } @x = 1; while (1) { return; } @y = 1; }`, ""},
		{`BEGIN { if (pid) { exit(); } else { exit(1); } @x = 1; }`, "Unreachable statement."},
		{`BEGIN { if (pid) { exit(); } @x = 1; }`, ""},
		{`BEGIN { for ($i : 0.."a") { } }`, "Expected an integer, got 'string[2]'"},
		{`BEGIN { for ($i : 0..2) { } $i; }`, "Undefined or undeclared variable: $i"},
		{`BEGIN { @l = lhist(1, 0, 10, 1); $n = len(@l); }`, "len() can not count the keys of @l, a lhist() map"},
		{`BEGIN { $b = buf(1); }`, "buf() needs a length when reading through a pointer"},
		{`BEGIN { $b = buf("abc", $1 + 1); }`, "buf(): the length of an array must be a constant integer"},
		{`BEGIN { $a = ntop("a"); }`, "ntop() expects an integer or an array of 4 or 16 bytes, got 'string[2]'"},
		{`BEGIN { $t = nsecs(utc); }`, "nsecs() takes a clock: boot, monotonic, tai, sw_tai"},
		{`BEGIN { $f = "%H"; $t = strftime($f, nsecs); }`, "strftime() expects a string literal as its format"},
		{`BEGIN { join("a b"); }`, "join() expects a pointer to an array of strings, got 'string[4]'"},
		{`BEGIN { $t = (1, 2); $c = $t[2]; }`, "Invalid tuple index: 2. Found 2 elements in tuple."},
		{`BEGIN { $t = (1, 2); $i = 0; $c = $t[$i]; }`, "The index of a tuple must be a constant"},
		{`struct A { int x[4]; } BEGIN { $a = (struct A *)0; $c = $a->x[2 + 3]; }`, "the index 5 is out of bounds for array of size 4"},
		{`BEGIN { $i = 1; $c = 5[$i]; }`, "The [] operator can not be used on a value of type 'int8'"},
		{`BEGIN { let $a: int32[99999999999]; }`, "An array of 99999999999 elements of 4 bytes is too large: at most 32768 bytes are supported"},
		{`BEGIN { let $a: int64[2305843009213693952]; }`, "An array of 2305843009213693952 elements of 8 bytes is too large: at most 32768 bytes are supported"},
		{`BEGIN { let $w: struct pair[99999999999]; }`, "An array of 99999999999 elements of 40 bytes is too large: at most 32768 bytes are supported"},
		{`BEGIN { $c = strcontains("a", 1); }`, "strcontains() expects two strings"},
		{`BEGIN { $o = offsetof(struct pair, nope); }`, "struct pair has no field named nope"},
		{`BEGIN { $o = offsetof(struct pair, d); }`, "offsetof(): struct pair.d is a bit field"},
		{`BEGIN { $o = offsetof(struct pair, a.x); }`, "struct pair.a has no field named x"},
		{`BEGIN { $o = offsetof(1, a); }`, "offsetof() expects a struct or union type, such as offsetof(struct task_struct, pid)"},
		{`BEGIN { $s = sizeof(struct nope); }`, "struct nope is not in the kernel's BTF"},
		{`tracepoint:syscalls:sys_enter_read { printf("%s\n", func); }`, "The func builtin can not be used with 'tracepoint' probes"},
		{`BEGIN { $p = (struct pair *)0; @x = $p->nope; }`, "Struct/union of type 'struct pair' does not contain a field named 'nope'"},
		{`BEGIN { $p = (struct pair *)0; @x = $p->a->b; }`, "Can not access field 'b' on expression of type 'int32'"},
		{`BEGIN { $p = (struct pair)0; }`, "Cannot cast to a struct pair value, only to a pointer: (struct pair *)"},
		{`BEGIN { $p = (struct nope *)0; }`, "struct nope is not in the kernel's BTF"},
		{`BEGIN { let $w: struct nope[2]; }`, "struct nope is not in the kernel's BTF"},
		{`BEGIN { $p = (struct pair *)"a"; }`, "Cannot cast from 'string[2]' to 'struct pair *'"},
		{`BEGIN { $x = *"a"; }`, "The * operator can not be applied to a value of type 'string[2]'"},
		{`BEGIN { $x = &1; }`, "The & operator can not be applied to a value of type 'int8'"},
		{`BEGIN { $x = NOT_AN_ENUM; }`, "Unknown identifier: 'NOT_AN_ENUM'; if it is a constant from a C header, add `#define NOT_AN_ENUM value` to the script"},
		{`BEGIN { $x = kaddr("nope"); }`, `Failed to resolve kernel symbol: nope`},
		{`kprobe:f { $x = arg6; }`, "arg6: a kprobe reads only the six arguments passed in registers, arg0 to arg5"},
		{`kprobe:f { $x = retval; }`, "The retval builtin can not be used with 'kprobe' probes"},
		{`kprobe:f { $x = args.a; }`, "The args builtin can not be used with 'kprobe' probes"},
		{`kprobe:f+x { }`, `kprobe:f+x: invalid offset "x"`},
		{`kretprobe:f+8 { }`, "kretprobe:f+8: an offset is only allowed on a single kprobe"},
		{`uprobe:/nonexistent/bin:f { }`, "/nonexistent/bin does not exist"},
		{`uprobe:/etc/passwd:f { }`, "/etc/passwd is not an ELF file"},
		{`uprobe:libnope_gtrace:f { }`, "could not find libnope_gtrace: not a path, a library in /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /lib64, /usr/lib64, /lib, /usr/lib, /usr/local/lib, /usr/local/lib/x86_64-linux-gnu, nor a program in PATH"},
		{`BEGIN { if (1) { $a = 1; } else { $a = 2; } @x = $a; }`, ""},
		{`BEGIN { if (1) { let $a = 1; } @x = $a; }`, "Undefined or undeclared variable: $a"},
		{`BEGIN { @x[kstack(fast)] = count(); }`, "kstack(): unknown stack mode fast: want bpftrace, perf, raw, build_id"},
		{`BEGIN { @x[ustack(0)] = count(); }`, "ustack(): the number of frames must be a constant from 1 to 1024"},
		{`BEGIN { $a = uaddr("x"); }`, "uaddr() can only be used in uprobe and uretprobe probes"},
		{"struct s { float f; double d; };\nBEGIN { $p = (struct s *)0; $x = $p->d; }", "Invalid expression for assignment"},
		// A script that redefines a kernel struct takes none from the
		// kernel, as in bpftrace; one that does not may hold them.
		{"struct pair { struct inner in; };\nBEGIN { }", "C definition: field in has incomplete type 'struct inner': a script that redefines struct pair takes no struct or union from the kernel"},
		{"struct inner { int x; }; struct pair { struct inner in; struct file *f; };\nBEGIN { }", ""},
		{"struct mine { struct inner in; };\nBEGIN { }", ""},
		{"struct s { float128 f; };\nBEGIN { }", `C definition: unknown type "float128": use an integer type or a struct, union or enum`},
		{"struct s { int a }; BEGIN { }", ""}, // as clang, which only warns
		{"struct s { int a b; }; BEGIN { }", `C definition: expected ";", found "b"`},
		{"struct s { struct nope n; }; BEGIN { }", "C definition: struct nope is not in the kernel's BTF"},
		{`BEGIN { $a = (uint8[4])1; $c = (int8[])"ab"; $d = (uint16)$a; $e = (uint32)$a; }`, "Cannot cast from 'uint8[4]' (4 bytes) to 'uint16' (2 bytes): the sizes differ"},
		{`BEGIN { $x = (int64)1; $a = (uint8[4])$x; }`, "Cannot cast from 'int64' (8 bytes) to 'uint8[4]' (4 bytes): the sizes differ"},
		{`BEGIN { $a = (uint8[2])70000; }`, "Cannot cast from 'int32' (4 bytes) to 'uint8[2]' (2 bytes): the sizes differ"},
		{`BEGIN { $a = (int16[])"abc"; $b = (int16[])"ab"; }`, "Cannot cast from 'string[3]' (3 bytes) to an array of int16: the size is not a multiple of 2"},
		{`BEGIN { $a = (uint8[4])"abc"; $b = (uint8[3])"abc"; }`, "Cannot cast from 'string[4]' (4 bytes) to 'uint8[3]' (3 bytes): the sizes differ"},
		{`BEGIN { $a = (string)1; }`, "Cannot cast to 'string[1024]'"},
		{`BEGIN { clear(@m); print(@m); $n = len(@m); for ($kv : @m) { } @m[1] = 2; @n = (1, 2); clear(@n); @n = (3, 4); }`, ""},
		{`nope:x { }`, "invalid probe type: nope"},
		{`// nothing`, "The program has no probes"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, got := check(t, tt.src, false)
			if got != tt.want {
				t.Errorf("got errors:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestCheckTypes(t *testing.T) {
	tests := []struct {
		src, m, key, value string
	}{
		{`BEGIN { @x = count(); }`, "@x", "", "count_t"},
		{`BEGIN { @x[pid, comm] = sum(5); }`, "@x", "(uint64,string[16])", "sum_t"},
		{`BEGIN { @x["a"] = 1; @x["abcdef"] = 2; }`, "@x", "string[7]", "int8"},
		{`BEGIN { @x = (1, "a"); }`, "@x", "", "(int8,string[2])"},
		{`BEGIN { @x = $1 + 1; @y = $2; @z = $#; }`, "@y", "", "string[5]"},
		{`tracepoint:syscalls:sys_enter_read { @x[args.comm] = args.count; }`, "@x", "string[16]", "uint64"},
		{`tracepoint:syscalls:sys_enter_read { @x = str(args.filename); }`, "@x", "", "string[1024]"},
		{`BEGIN { @x = -1 + (uint32)5; }`, "@x", "", "int64"},
		{`BEGIN { @x = (uint32)1 + (uint64)5; }`, "@x", "", "uint64"},
		{`BEGIN { @x = 1 < 2; }`, "@x", "", "bool"},
		{`BEGIN { @n = @n + 1; }`, "@n", "", "int64"},
		{`BEGIN { @x = @y + 1; @y = @x; }`, "@y", "", "int64"},
		{`BEGIN { @s[1] = 2 * @s[1]; }`, "@s", "int64", "int64"},
		{`BEGIN { system("ls"); @x = 1; }`, "@x", "", "int8"},
		{`BEGIN { let $w: struct pair[3]; @x = $w; }`, "@x", "", "struct pair[3]"},
		{`BEGIN { @m[1, "a"] = 2; for ($kv : @m) { @x = $kv; } }`, "@x", "", "((int64,string[2]),int64)"},
		{`BEGIN { @m["a"] = count(); for ($kv : @m) { @x = $kv; } }`, "@x", "", "(string[2],uint64)"},
		{`BEGIN { @m[1] = (uint32)1; for ($kv : @m) { @x = $kv.1; } }`, "@x", "", "uint64"},
		{`BEGIN { for ($i : 1..3) { @x[$i] = $i; } @y = len(@x); }`, "@y", "", "int64"},
		{`BEGIN { @x[ntop(1)] = buf("ab"); }`, "@x", "inet", "buffer[3]"},
		{`BEGIN { @x = strftime("%H", nsecs(tai)); }`, "@x", "", "timestamp"},
		{`BEGIN { $p = (struct pair *)0; @x = $p->in.y + $p->c->a; }`, "@x", "", "int64"},
		{`BEGIN { $p = (struct pair *)0; @x = $p->c; }`, "@x", "", "struct pair *"},
		{`BEGIN { $p = (struct pair *)0; @x = $p->d; }`, "@x", "", "uint32"},
		{`BEGIN { $p = (struct pair *)0; @x = *$p; }`, "@x", "", "struct pair"},
		{`BEGIN { $p = (struct pair *)0; @x = &$p->in; }`, "@x", "", "struct inner *"},
		{`BEGIN { $p = (uint16 *)0; @x = $p + 3; }`, "@x", "", "uint16 *"},
		{`BEGIN { @x = PAIR_B; }`, "@x", "", "int64"},
		{"struct pair { long z; }; BEGIN { $p = (struct pair *)0; @x = $p->z; }", "@x", "", "int64"},
		{"enum e { A, B = 7 }; BEGIN { @x = B; }", "@x", "", "enum e"}, // printed by name
		{`kprobe:vfs_read { @x = func; }`, "@x", "", "ksym_t"},
		{`kretprobe:vfs_read { @x[func] = retval; }`, "@x", "string[9]", "int64"},
		{`BEGIN { @x = kaddr("jiffies"); }`, "@x", "", "uint64"},
		{`BEGIN { @x[ustack(perf, 3), kstack(5)] = count(); @y = usym(1); }`, "@x", "(ustack_perf_3,kstack_bpftrace_5)", "count_t"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, true)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			m := info.Maps[tt.m]
			if got := typeList(m.Key); got != tt.key {
				t.Errorf("key type %s, want %s", got, tt.key)
			}
			if got := m.Value.String(); got != tt.value {
				t.Errorf("value type %s, want %s", got, tt.value)
			}
		})
	}
}

// TestUnsafeFuncs walks the builtin table: every unsafe function must be
// refused without --unsafe.
func TestUnsafeFuncs(t *testing.T) {
	args := map[Func]string{FSystem: `"true"`, FSignal: `"KILL"`}
	for _, f := range AllFuncs() {
		if !f.Unsafe() {
			continue
		}
		a, ok := args[f]
		if !ok {
			t.Errorf("unsafe function %s has no test arguments here", f)
			continue
		}
		src := "BEGIN { " + f.String() + "(" + a + "); }"
		if _, errs := check(t, src, false); !strings.Contains(errs, "unsafe function") {
			t.Errorf("%s: not refused in safe mode: %q", src, errs)
		}
		if _, errs := check(t, src, true); errs != "" {
			t.Errorf("%s: refused with --unsafe: %s", src, errs)
		}
	}
}

// TestConsts checks the values of sizeof and offsetof.
func TestConsts(t *testing.T) {
	tests := []struct {
		expr string
		want int64
	}{
		{"sizeof(struct pair)", 40},
		{"sizeof(uint32)", 4},
		{"sizeof(int8[3])", 3},
		{"sizeof(uint16)", 2},
		{`sizeof("abc")`, 4},
		{"sizeof(1 + 1)", 8},
		{"offsetof(struct pair, a)", 0},
		{"offsetof(struct pair, b)", 8},
		{"offsetof(struct pair, c)", 8},
		{"offsetof(struct pair, in)", 24},
		{"offsetof(struct pair, in.y)", 32},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			info, errs := check(t, "BEGIN { @x = "+tt.expr+"; }", false)
			if errs != "" {
				t.Fatal(errs)
			}
			p := info.Progs[0]
			rhs := p.Node.Body.Stmts[0].(*ast.AssignStmt).RHS
			if got := p.Consts[rhs]; got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestKprobeWarnings checks the warnings about kprobes that will not
// attach: the probe still compiles, as bpftrace's does.
func TestKprobeWarnings(t *testing.T) {
	noKprobes := "this kernel has no kprobes (no kprobe PMU, no kprobe_events in tracefs): "
	tests := []struct {
		src        string
		hasKprobes bool
		missing    string // the missing_probes setting
		want       string
	}{
		{`kprobe:vfs_read { }`, true, "error", ""},
		{`kprobe:notrace_fn { }`, true, "error", `notrace_fn is not traceable (either non-existing, inlined, or marked as "notrace"); attaching to it will likely fail`},
		{`kretprobe:vfs_read { }`, false, "warn", noKprobes + "kretprobe:vfs_read can not attach"},
		{`k:notrace_fn { }`, false, "error", noKprobes + "k:notrace_fn can not attach\n" +
			`notrace_fn is not traceable (either non-existing, inlined, or marked as "notrace"); attaching to it will likely fail`},
		{`kprobe:notrace_fn { }`, false, "ignore", ""},
		{`BEGIN { } tracepoint:syscalls:sys_enter_read { }`, false, "error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			f := token.NewFile("stdin", []byte(tt.src))
			prog, errs := parser.ParseFile(f)
			if errs.HasErrors() {
				t.Fatalf("parse: %v", errs)
			}
			cfg := DefaultConfig()
			cfg.MissingProbes = tt.missing
			opts := fakeOptions(cfg)
			opts.HasKprobes = func() bool { return tt.hasKprobes }
			info, errs := Check(prog, opts)
			if info == nil {
				t.Fatalf("refused: %v", errs)
			}
			var got []string
			for _, e := range errs {
				if !e.Warning {
					t.Errorf("error %q, want only warnings", e.Msg)
				}
				got = append(got, e.Msg)
			}
			if s := strings.Join(got, "\n"); s != tt.want {
				t.Errorf("got warnings:\n%s\nwant:\n%s", s, tt.want)
			}
		})
	}
}

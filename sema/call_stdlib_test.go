package sema

import (
	"strings"
	"testing"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
)

// TestStdlibTypes checks the value type of each standard library helper.
func TestStdlibTypes(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { @x = comm(); }`, "string[16]"},
		{`BEGIN { @x = __builtin_comm; }`, "string[16]"},
		{`BEGIN { @x = cpu() + __builtin_cpu; }`, "int64"},
		{`BEGIN { @x = pid(init); }`, "uint32"},
		{`BEGIN { @x = tid(curr_ns); }`, "uint32"},
		{`BEGIN { @x = probetype; }`, "string[8]"},
		{`kprobe:vfs_read { @x = __builtin_probetype(); }`, "string[7]"},
		{`BEGIN { @x = usermode(); }`, "uint8"},
		{`BEGIN { @x = ctx; }`, "void *"},
		{`BEGIN { @x = ppid(); }`, "uint32"},
		{`BEGIN { @x = ppid(curtask); }`, "uint32"},
		{`BEGIN { @x = leader_tid; }`, "uint32"},
		{`BEGIN { @x = leader_comm(curtask); }`, "string[16]"},
		{`BEGIN { @x = pcomm(curtask); }`, "string[16]"},
		{`BEGIN { @x = strlen("abc"); }`, "uint64"},
		{`BEGIN { @x = strlen((int8 *)0); }`, "uint64"},
		{`BEGIN { @x = strerror(1); }`, "string[64]"},
		{`BEGIN { @x = signal_name(1); }`, "string[64]"},
		{`BEGIN { @x = syscall_name(1); }`, "string[64]"},
		{`BEGIN { @x = strstr(comm, "a"); }`, "int64"},
		{`BEGIN { @x = str_concat(comm, "ab"); }`, "string[19]"},
		{`BEGIN { @x = memcmp(comm, "ab", 2); }`, "int64"},
		{`BEGIN { @x = strcap(comm); }`, "int64"},
		{`BEGIN { @x = is_str(comm); }`, "bool"},
		{`BEGIN { @x = has_cpid(); }`, "bool"},
		{`BEGIN { @x = has_cpid; }`, "bool"},
		{`BEGIN { @x = uptr((int8 *)1); }`, "int8 *"},
		{`BEGIN { @x = kptr(curtask); }`, "struct task_struct *"},
		{`BEGIN { @x = container_of((int32 *)0, typeof(struct pair), in.y); }`, "struct pair *"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, false)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			if got := info.Maps["@x"].Value.String(); got != tt.want {
				t.Errorf("type %s, want %s", got, tt.want)
			}
		})
	}
}

// TestStdlibConsts checks the helpers answered at compile time.
func TestStdlibConsts(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		{`BEGIN { @x = is_str(comm); }`, true},
		{`BEGIN { @x = is_str(pid); }`, false},
		{`BEGIN { @x = is_integer(pid); }`, true},
		{`BEGIN { @x = is_unsigned_integer(pid); }`, true},
		{`BEGIN { @x = is_unsigned_integer((int8)1); }`, false},
		{`BEGIN { @x = is_ptr(curtask); }`, true},
		{`BEGIN { @x = is_array((int8[4])1); }`, true},
		{`BEGIN { @x = is_literal("a"); }`, true},
		{`BEGIN { @x = is_literal(pid); }`, false},
		{`BEGIN { @x = is_literal(-1); }`, true},
		{`BEGIN { @x = strcap("abc"); }`, uint64(4)},
		{`BEGIN { @x = strcap((int8[3])1); }`, uint64(3)},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, false)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			x := info.Progs[0].Stands[assignedValue(t, info)]
			var got any
			switch x := x.(type) {
			case *ast.BoolLit:
				got = x.Value
			case *ast.IntLit:
				got = x.Value
			}
			if got != tt.want {
				t.Errorf("stands for %v (%T), want %v", got, x, tt.want)
			}
		})
	}
}

// TestOffsetofExpr checks offsetof of an expression's struct, which is
// typed and never run.
func TestOffsetofExpr(t *testing.T) {
	tests := []struct {
		src  string
		want int64
	}{
		{`BEGIN { @x = offsetof(*curtask, comm); }`, 16},
		{`BEGIN { $p = (struct pair *)0; @x = offsetof(*$p, in.y); }`, 32},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, false)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			stmts := info.Progs[0].Node.Body.Stmts
			got, ok := info.Progs[0].Consts[stmts[len(stmts)-1].(*ast.AssignStmt).RHS]
			if !ok || got != tt.want {
				t.Errorf("offset %d (%v), want %d", got, ok, tt.want)
			}
		})
	}
}

// assignedValue is the value of the first statement, @x = value.
func assignedValue(t *testing.T, info *Info) ast.Expr {
	t.Helper()
	s, ok := info.Progs[0].Node.Body.Stmts[0].(*ast.AssignStmt)
	if !ok {
		t.Fatalf("first statement is no assignment")
	}
	return s.RHS
}

// TestStdlibErrors checks the helpers' diagnostics.
func TestStdlibErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { @x = pid(foo); }`, "Invalid PID namespace mode: foo (expects: curr_ns or init)"},
		{`BEGIN { @x = tid(1); }`, "tid() only supports curr_ns and init as the argument"},
		{`BEGIN { @x = cpu(1); }`, "cpu() takes no arguments"},
		{`BEGIN { @x = comm(1, 2); }`, "comm() takes up to 1 arguments (2 provided)"},
		{`BEGIN { @x = comm(1); }`, "Syntax comm(PID) is not supported in this probe type yet. Type: special"},
		{`BEGIN { @x = comm("a"); }`, "Only integer supported for comm()'s pid"},
		{`BEGIN { @x = ppid(curtask, 1); }`, "ppid() requires 0 to 1 arguments (2 provided)"},
		{`BEGIN { @x = ppid("a"); }`, "ppid() expects a struct task_struct *, got 'string[2]'"},
		{`BEGIN { @x = strlen(1 == 1); }`, "strlen() expects a string, got 'bool'"},
		{`BEGIN { @x = strstr(comm, 1); }`, "strstr() expects a string, got 'int8'"},
		{`BEGIN { @x = strerror("a"); }`, "Expected an integer, got 'string[2]'"},
		{`BEGIN { @x = memcmp(comm, "a"); }`, "memcmp() requires 3 arguments (2 provided)"},
		{`BEGIN { @x = strcap(1); }`, "strcap() expects a string or an array of chars, got 'int8'"},
		{`BEGIN { @x = uptr("a"); }`, "Expected an integer, got 'string[2]'"},
		{`BEGIN { @x = container_of(1, pair, a); }`, "container_of() expects a struct or union type, such as typeof(struct task_struct)"},
		{`BEGIN { @x = container_of(1, typeof(struct pair), nope); }`, "struct pair has no field named nope"},
		{`BEGIN { static_assert(is_str(pid), "pid is no string"); }`, "pid is no string"},
		{`BEGIN { static_assert(pid == 1, "x"); }`, "static_assert() expects a condition known at compile time"},
		{`BEGIN { fail("bad %s: %d", "thing", 3); }`, "bad thing: 3"},
		{`BEGIN { fail("x %d", pid); }`, "fail() expects literals as its arguments"},
		{`BEGIN { assert(pid, comm); }`, "assert() expects a string literal as its message"},
		{`BEGIN { @x = is_str(); }`, "is_str() requires 1 arguments (0 provided)"},
		{`BEGIN { @x = offsetof(*curtask, nope); }`, "struct task_struct has no field named nope"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if _, errs := check(t, tt.src, false); errs != tt.want {
				t.Errorf("errors %q, want %q", errs, tt.want)
			}
		})
	}
}

// TestStdlibNames checks that every name of stdlibNames is a helper
// the checker knows.
func TestStdlibNames(t *testing.T) {
	for _, name := range stdlibNames {
		if _, errs := check(t, "BEGIN { "+name+"(); }", true); strings.Contains(errs, "Unknown function") {
			t.Errorf("stdlibNames has %s, which the checker does not know", name)
		}
	}
	if !builtin.IsFunc("strlen") || !builtin.IsFunc("container_of") || builtin.IsFunc("nosuch") {
		t.Errorf("the checker's functions are not declared to the macro expander")
	}
}

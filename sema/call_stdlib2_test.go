package sema

import (
	"testing"

	"gtrace/lang/ast"
)

// TestStdlib2Types checks the value types of find, path, is_err,
// cgroupid, default_str_length and the kfunc questions.
func TestStdlib2Types(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { @m[1] = 2; let $v; @x = find(@m, 1, $v); }`, "bool"},
		{`BEGIN { @m[1, "a"] = "bb"; $v = "ccc"; @x = find(@m, (2, "dd"), $v); }`, "bool"},
		{`BEGIN { @x = is_err(curtask); }`, "bool"},
		{`BEGIN { @x = default_str_length(); }`, "uint64"},
		{`BEGIN { @x = kfunc_exist("vfs_read"); }`, "bool"},
		{`BEGIN { @x = kfunc_allowed("nosuch"); }`, "bool"},
		{`fentry:vfs_read { @x = path(args.file); }`, "string[1024]"},
		{`fentry:vfs_read { @x = path(*args.file, 48); }`, "string[48]"},
		{`fexit:vfs_read { @x = path(args.file, 5000); }`, "string[1024]"},
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

// TestFindVariable checks that find() types its variable as `$v =
// @m[key]` would.
func TestFindVariable(t *testing.T) {
	tests := []struct{ src, want string }{
		{`BEGIN { @m[1] = (1, "hello"); let $v; find(@m, 2, $v); }`, "(int8,string[6])"},
		{`BEGIN { @m[1] = "reallylongstr"; $v = "hi"; find(@m, 2, $v); }`, "string[14]"},
		{`BEGIN { @m[1] = (uint16)1; $v = (int16)2; find(@m, 2, $v); }`, "int32"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, false)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			stmts := info.Progs[0].Node.Body.Stmts
			call := stmts[len(stmts)-1].(*ast.ExprStmt).X.(*ast.Call)
			if got := info.Progs[0].Vars[call.Args[2].(*ast.Var)].Type.String(); got != tt.want {
				t.Errorf("$v is %s, want %s", got, tt.want)
			}
		})
	}
}

// TestStdlib2Consts checks the helpers answered at compile time.
func TestStdlib2Consts(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		{`BEGIN { @x = default_str_length(); }`, uint64(1024)},
		{`BEGIN { @x = kfunc_exist("vfs_read"); }`, true},
		{`BEGIN { @x = kfunc_exist("nosuch"); }`, false},
		{`BEGIN { @x = kfunc_allowed("nosuch"); }`, false},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			info, errs := check(t, tt.src, false)
			if errs != "" {
				t.Fatalf("unexpected errors: %s", errs)
			}
			var got any
			switch x := info.Progs[0].Stands[assignedValue(t, info)].(type) {
			case *ast.BoolLit:
				got = x.Value
			case *ast.IntLit:
				got = x.Value
			}
			if got != tt.want {
				t.Errorf("stands for %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStdlib2Errors checks the diagnostics, bpftrace's where it has
// them.
func TestStdlib2Errors(t *testing.T) {
	tests := []struct {
		src    string
		unsafe bool
		want   string
	}{
		{`BEGIN { assert_str(1); }`, false, "string-like values must be either strings, arrays or pointers"},
		{`BEGIN { assert_str((int32 *)0); }`, false, "string-like pointers must point to a char-like type"},
		{`BEGIN { assert_str((int32[2])0); }`, false, "string-like arrays must contain a char-like type"},
		{`BEGIN { assert_str(comm); assert_str((int8 *)0); }`, false, ""},
		{`BEGIN { @x = default_str_length(1); }`, false, "default_str_length() requires 0 arguments (1 provided)"},
		{`BEGIN { @x = cgroupid(comm); }`, false, "cgroupid() expects a string literal"},
		{`BEGIN { @x = cgroupid("/nonexistent/cgroup"); }`, false, "Failed to get `cgroupid` for path: \"/nonexistent/cgroup\": No such file or directory"},
		{`BEGIN { @x = kfunc_exist(comm); }`, false, "kfunc_exist() accepts a string literal only"},
		{`BEGIN { @x = kfunc_allowed(1); }`, false, "kfunc_allowed() accepts a string literal only"},
		{`BEGIN { @x = is_err("a"); }`, false, "Cannot cast from 'string[2]' to 'int64'"},
		{`BEGIN { @m = 1; $v = 0; find(@m, 1, $v); }`, false, "call to find expects a map with explicit keys (non-scalar map)"},
		{`BEGIN { @m[1] = 1; $v = 0; find(@m[1], 1, $v); }`, false,
			"Call to find() has arguments that do not match any definition.\nMismatched arg. find() expects a map for arg @map but got an expression."},
		{`BEGIN { @m[1] = 1; $a = 1; find($a, 1, $a); }`, false,
			"Call to find() has arguments that do not match any definition.\nMismatched arg. find() expects a map for arg @map but got a variable."},
		{`BEGIN { @m[1] = 1; find(@m, 1, @m); }`, false,
			"Call to find() has arguments that do not match any definition.\nMismatched arg. find() expects a variable for arg $var but got a map."},
		{`BEGIN { @m[1] = 1; find(@m, 1); }`, false, "find() requires 3 arguments (2 provided)"},
		{`BEGIN { @m[1, 2] = 1; let $v; find(@m, 1, $v); }`, false,
			"Argument mismatch for @m: trying to access with arguments: 'int8' when map expects arguments: '(int8,int8)'"},
		{`BEGIN { @m[1] = 0; $v = "hello"; find(@m, 1, $v); }`, false,
			"Type mismatch for $v: trying to assign value of type 'int8' when variable already contains a value of type 'string[6]'"},
		{`BEGIN { @m[1] = count(); $v = 0; find(@m, 1, $v); }`, false, "find() can not read @m, a count() map: each CPU keeps its own value"},
		{`kprobe:vfs_read { override(-1); }`, false, "override() is unsafe. To use you need the --unsafe flag"},
		{`kprobe:vfs_read { override(-1); override(arg0); }`, true, ""},
		{`kretprobe:vfs_read { override(-1); }`, true, "override() can only be used inside kprobes"},
		{`tracepoint:sched:sched_switch { override(-1); }`, true, "override() can only be used inside kprobes"},
		{`kprobe:vfs_read { override("a"); }`, true, "override() only supports int arguments (string[2] provided)"},
		{`kprobe:vfs_read { signal_thread(1); }`, false, "signal_thread() is unsafe. To use you need the --unsafe flag"},
		{`BEGIN { signal_thread(1); }`, true, "signal_thread() can not be used for this probetype special"},
		{`kprobe:vfs_read { signal_thread("KILL"); signal_thread("SIGSTOP"); signal_thread(arg0); }`, true, ""},
		{`kprobe:vfs_read { signal_thread("SIGABC"); }`, true, "Invalid string for signal: SIGABC"},
		{`kprobe:vfs_read { signal_thread(0); }`, true, "signal_thread() accepts a string literal or an integer between 1 and 64 (inclusive)"},
		{`kprobe:vfs_read { signal_thread(100); }`, true, "signal_thread() accepts a string literal or an integer between 1 and 64 (inclusive)"},
		{`kprobe:vfs_read { $a = "SIGKILL"; signal_thread($a); }`, true, "signal_thread() accepts a string literal or an integer"},
		{`kprobe:vfs_read { $k = path(arg0); }`, false, "The path function can only be used with 'fentry', 'fexit', 'iter' probes"},
		{`BEGIN { $k = path(1); }`, false, "The path function can only be used with 'fentry', 'fexit', 'iter' probes"},
		{`iter:task_file { $k = path(ctx->file->f_path); }`, false,
			"path() is not supported in iter probes: bpf_d_path needs a pointer the verifier tracks; use fentry or fexit"},
		{`fentry:vfs_read { $k = path(args.file, -1); }`, false, "path: invalid size value, need non-negative literal"},
		{`fentry:vfs_read { $k = path(args.file, "Na"); }`, false, "path: invalid size value, need non-negative literal"},
		{`fentry:vfs_read { $k = path("abc"); }`, false, "path() only supports pointer or C type argument (string[4] provided)"},
		{`kprobe:vfs_read { unwatch(arg0); unwatch(0x1234); $x = 1; unwatch($x); }`, false, ""},
		{`BEGIN { unwatch("asdf"); }`, false, "Expected an integer, got 'string[5]'"},
		{`BEGIN { printf("%d", unwatch(2)); }`, false, "printf: Unable to print none type for specifier: d\nprintf() can not print a value of type 'none'"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if _, errs := check(t, tt.src, tt.unsafe); errs != tt.want {
				t.Errorf("errors %q, want %q", errs, tt.want)
			}
		})
	}
}

package runtime

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gtrace/internal/testutils"
)

// TestStdlib runs the standard library's helpers through the kernel;
// want is what the program prints before exit.
func TestStdlib(t *testing.T) {
	testutils.RequireRoot(t)
	tests := []struct{ name, src, want string }{
		{"builtins as calls",
			`BEGIN { print((comm() == comm, __builtin_comm == comm, cpu() == __builtin_cpu, ncpus() == ncpus, uid() == uid, __builtin_probetype)); exit(); }`,
			"(true, true, true, true, true, special)"},
		{"pid namespaces",
			`BEGIN { print((pid() == pid, pid(curr_ns) == pid(init), tid(curr_ns) == tid(init), tid() == tid)); exit(); }`,
			"(true, true, true, true)"},
		// ppid is the thread id of the parent's thread that forked this
		// process, as in bpftrace: not always getppid().
		{"process", `BEGIN { print((pid, ppid() == ppid, ppid(curtask) == ppid, leader_tid == pid, leader_comm == comm, usermode, probetype)); exit(); }`,
			fmt.Sprintf("(%d, true, true, true, true, 1, special)", os.Getpid())},
		{"username", `BEGIN { printf("%s %d\n", username, username); exit(); }`, "root 0"},
		{"strlen", `BEGIN { $s = "hello"; print((strlen($s), strlen(""), strlen(comm) <= 15, strlen(str((int8 *)0)))); exit(); }`,
			"(5, 0, true, 0)"},
		{"strerror", `BEGIN { print((strerror(22), strerror(-1), strerror(0), strerror(100000), strerror((uint32)-2))); exit(); }`,
			"(Invalid argument, Operation not permitted, Success, Unknown error, No such file or directory)"},
		{"signal_name", `BEGIN { print((signal_name(2), signal_name(9), signal_name(0), signal_name(1024), signal_name(40))); exit(); }`,
			"(Interrupt, Killed, Unknown signal 0, N/A, Real-time signal 6)"},
		{"syscall_name", `BEGIN { print((syscall_name(0), syscall_name(59), syscall_name(-1))); exit(); }`,
			"(read, execve, unknown)"},
		{"strstr", `BEGIN { print((strstr("hello", "ll"), strstr("hello", "x"), strstr("hello", ""), strstr("hello", "hello!"), strstr("abab", "b"))); exit(); }`,
			"(2, -1, 0, -1, 1)"},
		{"str_concat", `BEGIN { $s = str_concat("ab", "cd"); print(($s, strlen($s), str_concat("", "x"), str_concat("a", str_concat("b", "c")), $s == "abcd")); exit(); }`,
			"(abcd, 4, x, abc, true)"},
		{"memcmp", `BEGIN { print((memcmp("abc", "abd", 2), memcmp("abc", "abd", 3), memcmp("b", "a", 1), memcmp((1, 2), (1, 2), 16))); exit(); }`,
			"(0, -1, 1, 0)"},
		{"container_of", `struct Foo { long m; int n; } BEGIN { print(((uint64)container_of((int32 *)1008, typeof(struct Foo), n))); exit(); }`,
			"1000"},
		{"predicates", `BEGIN { print((is_str(comm), is_integer(pid), is_ptr(curtask), is_literal(1), is_unsigned_integer((int8)1), strcap(comm), has_cpid(), has_cpid)); exit(); }`,
			"(true, true, true, true, false, 16, false, false)"},
		{"address spaces", `BEGIN { $s = "x"; print(str(uptr(&$s)) == str(kptr(&$s))); exit(); }`, "true"},
		{"a true assert", `BEGIN { assert(pid > 0, "no pid"); static_assert(is_str(comm), "comm"); print(1); exit(); }`, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runScript(t, tt.src)
			line, _, _ := strings.Cut(got, "\n\n")
			if line != tt.want {
				t.Errorf("got %q, want %q", line, tt.want)
			}
		})
	}
}

// TestAssertFails checks that a false assert() ends the script with
// exit code 1, before what follows it, also from a loop.
func TestAssertFails(t *testing.T) {
	testutils.RequireRoot(t)
	for _, src := range []string{
		`BEGIN { assert(pid == 0, "pid is not 0"); print(1); }`,
		`BEGIN { for ($i : 0..3) { assert($i < 1, "too far"); } print(1); }`,
	} {
		got, code := runScript(t, src)
		if code != 1 || strings.Contains(got, "1") {
			t.Errorf("%s: exit code %d, output %q; want 1 and nothing", src, code, got)
		}
	}
}

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"gtrace/internal/testutils"
	"gtrace/tests/internal/harness"
)

// TestKernelTypes follows pointers into kernel and user memory with types
// from BTF: a syscall's struct argument, curtask and its parent, struct
// values, pointer arithmetic and address-of.
func TestKernelTypes(t *testing.T) {
	testutils.RequireRoot(t)
	script := `tracepoint:syscalls:sys_enter_clock_nanosleep /pid == cpid/ {
		$t = (struct task_struct *)curtask;
		printf("%d %d\n", args->rqtp->tv_sec, args.rqtp->tv_nsec);
		printf("%s %d %s\n", $t->comm, $t->tgid == pid, $t->real_parent->comm);
		print(*args->rqtp);
		$p = args->rqtp;
		printf("%d %d %d\n", ($p + 1) - $p, *(&$p->tv_nsec), $p[0].tv_nsec);
	}`
	r := harness.Gtrace(t, "-c", "/bin/sleep 0.25", "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	want := "0 250000000\nsleep 1 gtrace\n{ .tv_sec = 0, .tv_nsec = 250000000 }\n16 250000000 250000000\n"
	if got := harness.MapOutput(r.Stdout); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestKernelStructUnion reads a socket through a cast of a tracepoint's
// void pointer: a nested struct, members of anonymous unions, a kernel
// enum value by name.
func TestKernelStructUnion(t *testing.T) {
	testutils.RequireRoot(t)
	connect := "/bin/bash " + harness.WriteScript(t, "connect.sh", "echo > /dev/tcp/127.0.0.1/1\n")
	script := `tracepoint:sock:inet_sock_set_state /pid == cpid && args->newstate == TCP_SYN_SENT/ {
		$sk = (struct sock *)args->skaddr;
		printf("%d %s %d %d\n", $sk->__sk_common.skc_family, ntop($sk->__sk_common.skc_daddr),
			bswap($sk->__sk_common.skc_dport), $sk->__sk_common.skc_state == TCP_CLOSE);
	}`
	r := harness.Gtrace(t, "-c", connect, "-e", script)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// The tracepoint fires before the state changes: still TCP_CLOSE.
	if got, want := harness.MapOutput(r.Stdout), "2 127.0.0.1 1 1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestKernelEnum reads kernel enum values by name, checked against the
// kernel's BTF read here.
func TestKernelEnum(t *testing.T) {
	testutils.RequireRoot(t)
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, name := range []string{"skb_drop_reason", "tcp_ca_state"} {
		var e *btf.Enum
		if err := spec.TypeByName(name, &e); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%s=%d", e.Values[1].Name, e.Values[1].Value))
	}
	names := []string{strings.Split(want[0], "=")[0], strings.Split(want[1], "=")[0]}
	r := harness.Gtrace(t, "-e", fmt.Sprintf(`BEGIN { printf("%s=%%d %s=%%d\n", %s, %s); exit(); }`, names[0], names[1], names[0], names[1]))
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got := harness.MapOutput(r.Stdout); got != strings.Join(want, " ")+"\n" {
		t.Errorf("got %q, want %q", got, strings.Join(want, " ")+"\n")
	}
}

// TestChildQuiet checks that a -c child does nothing of its own before
// the command: the shell that waits makes one system call once released,
// the execve (59) of the command.
func TestChildQuiet(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "-c", "/bin/true", "-e", `tracepoint:raw_syscalls:sys_enter /pid == cpid && comm != "true"/ { @[args.id] = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if got, want := harness.MapOutput(r.Stdout), "@[59]: 1\n"; got != want {
		t.Errorf("the child's system calls before the command, by number:\n%s\nwant only the execve:\n%s", got, want)
	}
}

// TestKprobeLoads compiles kprobe, kretprobe and wildcard programs and
// loads them through the verifier. This kernel can load them but has no
// kprobes to attach them to; the VM tests attach them.
func TestKprobeLoads(t *testing.T) {
	testutils.RequireRoot(t)
	r := harness.Gtrace(t, "--dry-run", "-e", `kprobe:vfs_read { @[func, arg2] = count(); }
		kretprobe:vfs_read { @r = hist(retval); }
		kprobe:vfs_read* { @n[probe] = count(); }`)
	if r.Code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.Code, r.Stderr)
	}
}

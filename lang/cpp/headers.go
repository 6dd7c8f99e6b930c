package cpp

// A constant is a macro (or enum constant) that scripts take from a kernel
// or libc header. gtrace reads no system headers, so these values are
// written down here: the values on Linux x86_64, as of Linux 6.x. Only constants
// whose value has not changed since Linux 4.x are listed, so the table
// holds for any kernel gtrace runs on.
type constant struct {
	name   string
	value  int64
	header string // the header that defines it, as a script includes it
}

// constants is the one table of header constants. #include <H> defines,
// as object-like macros, the constants whose header is H or a header that
// H brings in (see includes).
var constants = []constant{
	// Task states, task_struct.__state and sched_switch's prev_state.
	{"TASK_RUNNING", 0x0000, "linux/sched.h"},
	{"TASK_INTERRUPTIBLE", 0x0001, "linux/sched.h"},
	{"TASK_UNINTERRUPTIBLE", 0x0002, "linux/sched.h"},
	{"__TASK_STOPPED", 0x0004, "linux/sched.h"},
	{"__TASK_TRACED", 0x0008, "linux/sched.h"},
	{"EXIT_DEAD", 0x0010, "linux/sched.h"},
	{"EXIT_ZOMBIE", 0x0020, "linux/sched.h"},
	{"TASK_PARKED", 0x0040, "linux/sched.h"},
	{"TASK_DEAD", 0x0080, "linux/sched.h"},
	{"TASK_WAKEKILL", 0x0100, "linux/sched.h"},
	{"TASK_WAKING", 0x0200, "linux/sched.h"},
	{"TASK_NOLOAD", 0x0400, "linux/sched.h"},
	{"TASK_NEW", 0x0800, "linux/sched.h"},
	{"TASK_KILLABLE", 0x0102, "linux/sched.h"}, // TASK_WAKEKILL | TASK_UNINTERRUPTIBLE
	{"TASK_STOPPED", 0x0104, "linux/sched.h"},  // TASK_WAKEKILL | __TASK_STOPPED
	{"TASK_IDLE", 0x0402, "linux/sched.h"},     // TASK_UNINTERRUPTIBLE | TASK_NOLOAD

	// Per-task flags, task_struct.flags.
	{"PF_IDLE", 0x00000002, "linux/sched.h"},
	{"PF_EXITING", 0x00000004, "linux/sched.h"},
	{"PF_WQ_WORKER", 0x00000020, "linux/sched.h"},
	{"PF_FORKNOEXEC", 0x00000040, "linux/sched.h"},
	{"PF_SUPERPRIV", 0x00000100, "linux/sched.h"},
	{"PF_DUMPCORE", 0x00000200, "linux/sched.h"},
	{"PF_SIGNALED", 0x00000400, "linux/sched.h"},
	{"PF_MEMALLOC", 0x00000800, "linux/sched.h"},
	{"PF_NOFREEZE", 0x00008000, "linux/sched.h"},
	{"PF_KSWAPD", 0x00020000, "linux/sched.h"},
	{"PF_KTHREAD", 0x00200000, "linux/sched.h"},

	// Time units.
	{"MSEC_PER_SEC", 1000, "vdso/time64.h"},
	{"USEC_PER_MSEC", 1000, "vdso/time64.h"},
	{"NSEC_PER_USEC", 1000, "vdso/time64.h"},
	{"NSEC_PER_MSEC", 1000000, "vdso/time64.h"},
	{"USEC_PER_SEC", 1000000, "vdso/time64.h"},
	{"NSEC_PER_SEC", 1000000000, "vdso/time64.h"},

	// Address families, sock_common.skc_family; the PF_ names are equal.
	{"AF_UNSPEC", 0, "linux/socket.h"},
	{"AF_UNIX", 1, "linux/socket.h"},
	{"AF_LOCAL", 1, "linux/socket.h"},
	{"AF_INET", 2, "linux/socket.h"},
	{"AF_INET6", 10, "linux/socket.h"},
	{"AF_NETLINK", 16, "linux/socket.h"},
	{"AF_PACKET", 17, "linux/socket.h"},
	{"AF_VSOCK", 40, "linux/socket.h"},
	{"PF_UNSPEC", 0, "linux/socket.h"},
	{"PF_UNIX", 1, "linux/socket.h"},
	{"PF_LOCAL", 1, "linux/socket.h"},
	{"PF_INET", 2, "linux/socket.h"},
	{"PF_INET6", 10, "linux/socket.h"},
	{"PF_NETLINK", 16, "linux/socket.h"},
	{"PF_PACKET", 17, "linux/socket.h"},

	// Socket types.
	{"SOCK_STREAM", 1, "linux/net.h"},
	{"SOCK_DGRAM", 2, "linux/net.h"},
	{"SOCK_RAW", 3, "linux/net.h"},
	{"SOCK_SEQPACKET", 5, "linux/net.h"},

	// TCP states, sock_common.skc_state (an enum in the kernel).
	{"TCP_ESTABLISHED", 1, "net/tcp_states.h"},
	{"TCP_SYN_SENT", 2, "net/tcp_states.h"},
	{"TCP_SYN_RECV", 3, "net/tcp_states.h"},
	{"TCP_FIN_WAIT1", 4, "net/tcp_states.h"},
	{"TCP_FIN_WAIT2", 5, "net/tcp_states.h"},
	{"TCP_TIME_WAIT", 6, "net/tcp_states.h"},
	{"TCP_CLOSE", 7, "net/tcp_states.h"},
	{"TCP_CLOSE_WAIT", 8, "net/tcp_states.h"},
	{"TCP_LAST_ACK", 9, "net/tcp_states.h"},
	{"TCP_LISTEN", 10, "net/tcp_states.h"},
	{"TCP_CLOSING", 11, "net/tcp_states.h"},
	{"TCP_NEW_SYN_RECV", 12, "net/tcp_states.h"},

	// open(2) flags. O_LARGEFILE is left out: glibc and the kernel differ.
	{"O_RDONLY", 0, "asm-generic/fcntl.h"},
	{"O_WRONLY", 1, "asm-generic/fcntl.h"},
	{"O_RDWR", 2, "asm-generic/fcntl.h"},
	{"O_ACCMODE", 3, "asm-generic/fcntl.h"},
	{"O_CREAT", 0100, "asm-generic/fcntl.h"},
	{"O_EXCL", 0200, "asm-generic/fcntl.h"},
	{"O_NOCTTY", 0400, "asm-generic/fcntl.h"},
	{"O_TRUNC", 01000, "asm-generic/fcntl.h"},
	{"O_APPEND", 02000, "asm-generic/fcntl.h"},
	{"O_NONBLOCK", 04000, "asm-generic/fcntl.h"},
	{"O_NDELAY", 04000, "asm-generic/fcntl.h"},
	{"O_DSYNC", 010000, "asm-generic/fcntl.h"},
	{"O_DIRECT", 040000, "asm-generic/fcntl.h"},
	{"O_DIRECTORY", 0200000, "asm-generic/fcntl.h"},
	{"O_NOFOLLOW", 0400000, "asm-generic/fcntl.h"},
	{"O_NOATIME", 01000000, "asm-generic/fcntl.h"},
	{"O_CLOEXEC", 02000000, "asm-generic/fcntl.h"},
	{"O_SYNC", 04010000, "asm-generic/fcntl.h"}, // __O_SYNC | O_DSYNC
	{"O_PATH", 010000000, "asm-generic/fcntl.h"},
	{"O_TMPFILE", 020200000, "asm-generic/fcntl.h"}, // __O_TMPFILE | O_DIRECTORY
	{"AT_FDCWD", -100, "linux/fcntl.h"},
	{"AT_SYMLINK_NOFOLLOW", 0x100, "linux/fcntl.h"},
	{"AT_REMOVEDIR", 0x200, "linux/fcntl.h"},
	{"AT_EMPTY_PATH", 0x1000, "linux/fcntl.h"},

	// Error numbers, negated in syscall return values.
	{"EPERM", 1, "asm-generic/errno-base.h"},
	{"ENOENT", 2, "asm-generic/errno-base.h"},
	{"ESRCH", 3, "asm-generic/errno-base.h"},
	{"EINTR", 4, "asm-generic/errno-base.h"},
	{"EIO", 5, "asm-generic/errno-base.h"},
	{"ENXIO", 6, "asm-generic/errno-base.h"},
	{"E2BIG", 7, "asm-generic/errno-base.h"},
	{"ENOEXEC", 8, "asm-generic/errno-base.h"},
	{"EBADF", 9, "asm-generic/errno-base.h"},
	{"ECHILD", 10, "asm-generic/errno-base.h"},
	{"EAGAIN", 11, "asm-generic/errno-base.h"},
	{"ENOMEM", 12, "asm-generic/errno-base.h"},
	{"EACCES", 13, "asm-generic/errno-base.h"},
	{"EFAULT", 14, "asm-generic/errno-base.h"},
	{"EBUSY", 16, "asm-generic/errno-base.h"},
	{"EEXIST", 17, "asm-generic/errno-base.h"},
	{"EXDEV", 18, "asm-generic/errno-base.h"},
	{"ENODEV", 19, "asm-generic/errno-base.h"},
	{"ENOTDIR", 20, "asm-generic/errno-base.h"},
	{"EISDIR", 21, "asm-generic/errno-base.h"},
	{"EINVAL", 22, "asm-generic/errno-base.h"},
	{"ENFILE", 23, "asm-generic/errno-base.h"},
	{"EMFILE", 24, "asm-generic/errno-base.h"},
	{"ENOTTY", 25, "asm-generic/errno-base.h"},
	{"EFBIG", 27, "asm-generic/errno-base.h"},
	{"ENOSPC", 28, "asm-generic/errno-base.h"},
	{"ESPIPE", 29, "asm-generic/errno-base.h"},
	{"EROFS", 30, "asm-generic/errno-base.h"},
	{"EMLINK", 31, "asm-generic/errno-base.h"},
	{"EPIPE", 32, "asm-generic/errno-base.h"},
	{"EDOM", 33, "asm-generic/errno-base.h"},
	{"ERANGE", 34, "asm-generic/errno-base.h"},
	{"ENOSYS", 38, "asm-generic/errno.h"},
	{"EWOULDBLOCK", 11, "asm-generic/errno.h"},
	{"EADDRINUSE", 98, "asm-generic/errno.h"},
	{"ECONNRESET", 104, "asm-generic/errno.h"},
	{"ETIMEDOUT", 110, "asm-generic/errno.h"},
	{"ECONNREFUSED", 111, "asm-generic/errno.h"},
	{"EINPROGRESS", 115, "asm-generic/errno.h"},

	// Signal numbers (x86 numbering).
	{"SIGHUP", 1, "asm/signal.h"},
	{"SIGINT", 2, "asm/signal.h"},
	{"SIGQUIT", 3, "asm/signal.h"},
	{"SIGILL", 4, "asm/signal.h"},
	{"SIGTRAP", 5, "asm/signal.h"},
	{"SIGABRT", 6, "asm/signal.h"},
	{"SIGBUS", 7, "asm/signal.h"},
	{"SIGFPE", 8, "asm/signal.h"},
	{"SIGKILL", 9, "asm/signal.h"},
	{"SIGUSR1", 10, "asm/signal.h"},
	{"SIGSEGV", 11, "asm/signal.h"},
	{"SIGUSR2", 12, "asm/signal.h"},
	{"SIGPIPE", 13, "asm/signal.h"},
	{"SIGALRM", 14, "asm/signal.h"},
	{"SIGTERM", 15, "asm/signal.h"},
	{"SIGSTKFLT", 16, "asm/signal.h"},
	{"SIGCHLD", 17, "asm/signal.h"},
	{"SIGCONT", 18, "asm/signal.h"},
	{"SIGSTOP", 19, "asm/signal.h"},
	{"SIGTSTP", 20, "asm/signal.h"},
	{"SIGTTIN", 21, "asm/signal.h"},
	{"SIGTTOU", 22, "asm/signal.h"},
	{"SIGURG", 23, "asm/signal.h"},
	{"SIGXCPU", 24, "asm/signal.h"},
	{"SIGXFSZ", 25, "asm/signal.h"},
	{"SIGVTALRM", 26, "asm/signal.h"},
	{"SIGPROF", 27, "asm/signal.h"},
	{"SIGWINCH", 28, "asm/signal.h"},
	{"SIGIO", 29, "asm/signal.h"},
	{"SIGPWR", 30, "asm/signal.h"},
	{"SIGSYS", 31, "asm/signal.h"},
}

// includes lists, for headers a script may include, the headers of the
// table that they bring in through their own #includes, as a compiler
// would see them. libc headers that define the same values (glibc's
// <sys/socket.h> through <bits/socket.h>, <fcntl.h>, <errno.h>,
// <signal.h>) bring in the kernel header of the table.
var includes = map[string][]string{
	"sys/socket.h":        {"linux/socket.h", "linux/net.h"},
	"linux/net.h":         {"linux/socket.h"},
	"net/sock.h":          {"linux/net.h", "net/tcp_states.h"},
	"linux/tcp.h":         {"net/sock.h"},
	"net/tcp.h":           {"net/sock.h"},
	"linux/time.h":        {"vdso/time64.h"},
	"linux/time64.h":      {"vdso/time64.h"},
	"linux/ktime.h":       {"vdso/time64.h"},
	"fcntl.h":             {"asm-generic/fcntl.h", "linux/fcntl.h"},
	"linux/fcntl.h":       {"asm-generic/fcntl.h"},
	"asm/fcntl.h":         {"asm-generic/fcntl.h"},
	"linux/fs.h":          {"linux/fcntl.h"},
	"errno.h":             {"asm-generic/errno.h"},
	"linux/errno.h":       {"asm-generic/errno.h"},
	"asm/errno.h":         {"asm-generic/errno.h"},
	"asm-generic/errno.h": {"asm-generic/errno-base.h"},
	"signal.h":            {"asm/signal.h"},
	"linux/signal.h":      {"asm/signal.h"},
}

// headerConstants returns the constants that #include <header> defines.
func headerConstants(header string) []constant {
	seen := map[string]bool{}
	var walk func(h string)
	walk = func(h string) {
		if seen[h] {
			return
		}
		seen[h] = true
		for _, in := range includes[h] {
			walk(in)
		}
	}
	walk(header)
	var out []constant
	for _, c := range constants {
		if seen[c.header] {
			out = append(out, c)
		}
	}
	return out
}

// typeHeaders are kernel headers that scripts include for their types,
// which gtrace takes from BTF, and that define no constant of the table.
// Debian's bpftrace tools include the first ones; stdint.h's fixed-width
// types are the kernel's too.
var typeHeaders = map[string]bool{
	"linux/bio.h": true, "linux/blk-mq.h": true, "linux/blkdev.h": true,
	"linux/genhd.h": true, "linux/oom.h": true, "linux/skbuff.h": true,
	"linux/dcache.h": true, "linux/file.h": true, "linux/in.h": true,
	"linux/in6.h": true, "linux/ip.h": true, "linux/ipv6.h": true,
	"linux/kernel.h": true, "linux/mm.h": true, "linux/mm_types.h": true,
	"linux/mount.h": true, "linux/netdevice.h": true, "linux/nsproxy.h": true,
	"linux/path.h": true, "linux/pid_namespace.h": true, "linux/ptrace.h": true,
	"linux/types.h": true, "linux/udp.h": true, "linux/utsname.h": true,
	"net/inet_sock.h": true, "net/ipv6.h": true, "net/net_namespace.h": true,
	"stdint.h": true,
}

// knownHeader reports whether #include <header> may name no file: the
// header is in the table, or brings in headers that are, or is one of
// typeHeaders.
func knownHeader(header string) bool {
	if typeHeaders[header] || includes[header] != nil {
		return true
	}
	for _, c := range constants {
		if c.header == header {
			return true
		}
	}
	return false
}

// Package floor holds the floor of the overhead benchmark: for each of its
// 18 bpftrace scripts, the smallest BPF program that does the same work,
// written by hand with cilium/ebpf's asm package rather than produced by
// gtrace's code generator. The kernel's own accounting (run_time_ns and
// run_cnt, with BPF statistics on) of these programs is the limit that
// generated code is measured against.
//
// The scripts trace dd's reads, one event per read:
//
//	01 BEGIN {}                                  (loads nothing)
//	02 k:vfs_read { 1 }
//	03 kr:vfs_read { 1 }
//	04 t:syscalls:sys_enter_read { 1 }
//	05 t:syscalls:sys_exit_read { 1 }
//	06 u:libc:__read { 1 }
//	07 ur:libc:__read { 1 }
//	08 k:vfs_read /arg2 > 0/ { 1 }
//	09 k:vfs_read { @ = count() }
//	10 k:vfs_read { @[pid] = count() }
//	11 k:vfs_read { @[comm] = count() }
//	12 k:vfs_read { @[pid, comm] = count() }
//	13 k:vfs_read { @[kstack] = count() }
//	14 k:vfs_read { @[ustack] = count() }
//	15 k:vfs_read { @ = hist(arg2) }
//	16 k:vfs_read { @s[tid] = nsecs }
//	   kr:vfs_read /@s[tid]/ { @ = hist(nsecs - @s[tid]); delete(@s[tid]); }
//	17 k:vfs_read { @[kstack, ustack] = hist(arg2) }
//	18 k:vfs_read { printf("%d bytes\n", arg2) }
//
// Where the kernel has no kprobes, k:vfs_read becomes the tracepoint
// syscalls:sys_enter_read, with args->count for arg2, and kr:vfs_read
// becomes syscalls:sys_exit_read; Options.Kprobes asks for vfs_read's
// kprobes instead.
//
// Each floor does what bpftrace's semantics ask and nothing more: counts
// live in per-CPU maps, looked up then incremented or inserted; stacks
// are ids from bpf_get_stackid; a hist bucket is bpftrace's log2 bucket;
// printf sends a format id and its argument through a ring buffer, which
// a goroutine drains and formats, as a tracer's user space does.
package floor

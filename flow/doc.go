// Package flow follows system calls of a process through the kernel, as
// DTrace's flowindent does: every entry and return of the chosen kernel
// functions inside them, indented by depth, with the time each took.
//
// Script writes the bpftrace program that records it: the system call's
// entry (raw_syscalls:sys_enter, for the target process and the chosen
// calls) sets a flag for its thread, which the probes on the functions
// test, and its exit clears it. Each probe sends one event, a tuple
// (kind, nsecs, cpu, tid, what, ...), where kind says which of the four
// events it is:
//
//	(0, nsecs, cpu, tid, syscall number, pid, comm)   => system call
//	(1, nsecs, cpu, tid, syscall number)              <= system call
//	(2, nsecs, cpu, tid, func)                        -> function
//	(3, nsecs, cpu, tid, func)                        <- function
//
// The functions are probed with kprobes and kretprobes: one program and
// one link for all the functions of a glob where the kernel has
// kprobe.multi (6.12), a kprobe each where it does not (6.1). Without
// kprobes, fentry and fexit, a program each.
//
// A Recorder is the output.Printer that receives the events: it prints
// each as a line as it comes, and nests them, a thread a track, into a
// calltrace.Recording, for the call graph (calltrace's Graph) and the
// Chrome Trace file.
package flow

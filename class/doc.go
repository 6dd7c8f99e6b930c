// Package class traces every kernel function that takes a given struct,
// and follows each object of it through its life: `gtrace class bio`.
//
// Scan finds the functions in the kernel's and modules' BTF: those
// among the traceable ones (tracefs' available_filter_functions) with a
// parameter, among the first MaxArg, that points to the struct or to a
// struct whose first member is it, as struct tcp_sock begins with a
// struct sock.
//
// Generate writes a bpftrace program for them, which compiler.Compile
// and runtime.Run run as any script: where the kernel has kprobe.multi,
// one multi-kprobe per argument position and role (plain, start, end)
// and one multi-kretprobe for the returns (two, with the end functions
// apart), each a single link; otherwise an fentry and an fexit program
// per function. In BPF, a map of live addresses decides which calls are
// recorded: a call on an object not yet live starts a life where the
// filters (pid, comm, cpu, a predicate on the fields) hold; a start
// function (bio_init) starts a new life even at a live address, and
// the return of an end function (bio_put) ends it. Later calls on a
// live object are recorded whatever thread or CPU they run on, which
// follows a bio into its completion interrupt.
//
// A Recorder is the program's output.Printer: it keeps the events, and
// after the run nests them into a calltrace.Recording, one track per
// life. Returns carry no object: they are paired with their entries
// per thread, so the program sends, while a thread is inside a recorded
// call, the entries of calls on other objects too (as inner events, not
// recorded) and every return.
package class

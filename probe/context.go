package probe

// Context describes what a provider's programs receive as their context,
// so that code generation reads arguments and return values by the
// layout, never by the kind of probe.
type Context int

// The contexts.
const (
	// NoContext is a program run by gtrace through BPF_PROG_TEST_RUN
	// (BEGIN, END, self): nothing is traced, there is no stack to record.
	NoContext Context = iota
	// Registers is struct pt_regs: the first six arguments in the
	// calling convention's registers, the return value in ax.
	Registers
	// USDTArgs is struct pt_regs, each argument where the site's USDT
	// note says: a register, memory at an offset of one, or a constant.
	USDTArgs
	// RawArgs is an array of u64, the raw tracepoint's arguments.
	RawArgs
	// BTFArgs is an array of u64, the function's arguments and then its
	// return value, typed by the function's BTF (fentry, fexit).
	BTFArgs
	// Record is a tracepoint's record, laid out by its format file.
	Record
	// SyscallArgs is raw_syscalls' {struct pt_regs *regs; long id}, or
	// {regs, long ret} at exit: a fused syscall tracepoint's.
	SyscallArgs
	// PerfSample is struct bpf_perf_event_data.
	PerfSample
	// IterContext is struct bpf_iter__NAME: the iterator's meta, which
	// holds the seq_file printf writes to, then the object's pointers.
	IterContext
)

// Package fakekernel stands in for what the running kernel tells the
// checker: tracepoint formats, BTF types and functions, enum values,
// kallsyms, kprobe support and the attach points themselves. Its
// functions fit the hook fields of sema.Options, so that sema, codegen
// and the benchmarks check and compile scripts without root and without
// depending on the machine's kernel:
//
//	info, errs := sema.Check(prog, &sema.Options{Config: cfg,
//		Expand: fakekernel.Expand, Format: fakekernel.Format,
//		KernelType: fakekernel.KernelType, EnumValue: fakekernel.EnumValue,
//		Func: fakekernel.Func, Kaddr: fakekernel.Kaddr, KernelVar: fakekernel.KernelVar,
//		HasKprobes: fakekernel.HasKprobes, Traceable: fakekernel.Traceable})
//
// The package does not import sema, whose own tests use it.
//
// The fake kernel has:
//   - tracepoints: any category and event. Events named sys_exit_* have
//     sys_exit_read's fields (__syscall_nr, ret); every other event has
//     sys_enter_read's (__syscall_nr, fd, buf, count) and a char[16]
//     comm, a __data_loc char[] filename and a struct pair *p.
//   - types: struct pair { int a; union { long b; struct pair *c; };
//     int d:3; inner_t in; }, struct inner { long x, y; }, typedef
//     inner_t, struct file { unsigned int f_flags; long long f_pos; }
//     and enum pair_kind { PAIR_A = 1, PAIR_B = 2 }.
//   - functions, for fentry and fexit: vfs_read and vfs_write, as
//     ssize_t vfs_read(struct file *file, char *buf, size_t count,
//     loff_t *pos), the real kernel's prototype.
//   - kallsyms: jiffies alone.
//   - kprobes, on every function but notrace_fn.
package fakekernel

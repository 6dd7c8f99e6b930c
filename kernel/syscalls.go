package kernel

// SyscallNumber returns the x86_64 number of a syscall, named as its
// tracepoints name it (sys_enter_NAME).
func SyscallNumber(name string) (int, bool) {
	nr, ok := syscallNumbers[name]
	return nr, ok
}

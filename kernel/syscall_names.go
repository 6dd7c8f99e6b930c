package kernel

// SyscallNames maps x86_64 syscall numbers to their names, the reverse
// of SyscallNumber.
func SyscallNames() map[int]string {
	names := make(map[int]string, len(syscallNumbers))
	for name, nr := range syscallNumbers {
		names[nr] = name
	}
	return names
}

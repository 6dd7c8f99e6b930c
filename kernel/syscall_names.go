package kernel

// SyscallNames lists the syscall names by number, "" where a number
// has none.
func SyscallNames() []string {
	n := 0
	for _, nr := range syscallNumbers {
		n = max(n, nr+1)
	}
	names := make([]string, n)
	for name, nr := range syscallNumbers {
		names[nr] = name
	}
	return names
}

package cpp

import (
	"slices"

	"gtrace/kernel"
)

// <asm/unistd.h> and the headers that include it define the x86_64
// system call numbers, __NR_read and on, from the kernel package's table.
func init() {
	names := kernel.SyscallNames()
	nrs := make([]int, 0, len(names))
	for nr := range names {
		nrs = append(nrs, nr)
	}
	slices.Sort(nrs)
	for _, nr := range nrs {
		constants = append(constants, constant{name: "__NR_" + names[nr], value: int64(nr), header: "asm/unistd_64.h"})
	}
	for _, h := range []string{"syscall.h", "sys/syscall.h", "asm/unistd.h"} {
		includes[h] = []string{"asm/unistd_64.h"}
	}
}

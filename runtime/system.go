package runtime

import "os/exec"

// execShell runs a system() command line through the shell, as bpftrace
// does, and returns what it printed.
func execShell(cmd string) ([]byte, error) {
	return exec.Command("/bin/sh", "-c", cmd).CombinedOutput()
}

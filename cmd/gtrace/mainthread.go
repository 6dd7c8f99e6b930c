package main

import "runtime"

// The main goroutine stays on the process's first thread, which runs
// BEGIN and END: their tid is gtrace's pid, as in bpftrace.
func init() { runtime.LockOSThread() }

// Package bpfstat reports what every BPF program on the machine costs:
// its run count and run time by the kernel's own accounting, what it is
// attached to, and which processes hold it. It is what `gtrace top`
// shows.
package bpfstat

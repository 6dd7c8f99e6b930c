// Package bpfprof profiles one running BPF program: how often it runs
// and what each run costs, measured by fentry and fexit programs attached
// to it, next to the kernel's own run statistics. It also dumps a
// program's translated and JITed instructions. It is what `gtrace prof`
// shows.
package bpfprof

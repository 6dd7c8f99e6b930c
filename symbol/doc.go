// Package symbol symbolizes kernel addresses from /proc/kallsyms and
// formats them the way bpftrace v0.26 prints ksym() and kstack.
package symbol

// Package kernel describes what the running kernel offers to a tracer:
// where tracefs lives, tracepoint format files, the probes that can be
// listed with -l, and CPU topology.
//
// Listing follows bpftrace v0.26: lines are "provider:target:name" (software
// and hardware events end in ':'), sorted per provider, and providers are
// visited in alphabetical order.
package kernel

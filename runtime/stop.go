package runtime

import (
	"time"

	"github.com/cilium/ebpf/ringbuf"
)

// discardQueued drops the events still in the ring buffer once exit() or
// a signal has stopped tracing, as bpftrace does: under load they may be
// thousands of system() commands, which would hold END back for as long
// as they take to run.
func (r *run) discardQueued() {
	var rec ringbuf.Record
	for r.rd.AvailableBytes() > 0 {
		r.rd.SetDeadline(time.Now())
		if r.rd.ReadInto(&rec) != nil {
			return
		}
	}
}

package runtime

import (
	"errors"
	"fmt"

	"gtrace/probe"
)

// warnUnattached reports a probe that failed to attach when
// missing_probes is warn, as bpftrace does: why, then that it is
// skipped.
func (r *run) warnUnattached(err error) {
	var ae *probe.AttachError
	if !errors.As(err, &ae) {
		fmt.Fprintf(r.opts.Stderr, "WARNING: %v\n", err)
		return
	}
	fmt.Fprintf(r.opts.Stderr, "WARNING: %v\nWARNING: Unable to attach probe: %s. Skipping.\n", ae.Err, ae.Probe)
}

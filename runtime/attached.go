package runtime

import "gtrace/probe"

// attachedCount counts the probes as bpftrace's "Attached N probes"
// does: BEGIN, END and signal probes, each function of a multi-probe,
// and a USDT probe once however many sites it has in a file; a probe
// that failed to attach (missing_probes = warn or ignore), or that only
// --mode bench or test runs, not at all.
func (r *run) attachedCount() uint64 {
	var n uint64
	usdt := map[string]bool{}
	for _, p := range r.out.Progs {
		pr := &p.Prog.Probe
		switch {
		case r.unattached[p.Name], pr.Kind == probe.Bench, pr.Kind == probe.Test: // run only with --mode bench or test
		case pr.Kind == probe.Usdt:
			if !usdt[pr.Name] {
				usdt[pr.Name] = true
				n++
			}
		default:
			n += uint64(max(1, len(pr.Funcs)))
		}
	}
	return n
}

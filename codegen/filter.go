package codegen

import "gtrace/probe"

// Filter keeps only the programs of the probes keep accepts, as
// bpftrace's --probe-filter does; BEGIN, END and self probes always
// stay. A dispatcher whose fused programs are all gone goes too.
func (o *Output) Filter(keep func(name string) bool) {
	var progs []*Program
	for _, p := range o.Progs {
		switch p.Prog.Probe.Kind {
		case probe.Begin, probe.End, probe.Self:
		default:
			if !keep(p.Prog.Probe.Name) {
				delete(o.Spec.Programs, p.Name)
				delete(o.Slots, p.Name)
				continue
			}
		}
		progs = append(progs, p)
	}
	o.Progs = progs
	if len(o.Slots) == 0 {
		for _, d := range o.Dispatchers {
			delete(o.Spec.Programs, d.Name)
		}
		o.Dispatchers = nil
	}
}

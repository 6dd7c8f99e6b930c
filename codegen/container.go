package codegen

import "github.com/cilium/ebpf/asm"

// CgroupFilter keeps the events of the tasks in one cgroup v2 and the
// cgroups below it (--cgroup, --pod): a pod's containers are directories
// in its own, so a filter on a pod must take its descendants.
type CgroupFilter struct {
	ID    uint64 // the cgroup's id, its directory's inode number
	Level int    // its depth below the hierarchy's root, 0 for the root
}

// PidNSFilter keeps the events of the tasks whose PID namespace is this
// one (--pidns), not those of namespaces nested in it: the device of the
// namespace file system and the namespace's inode, as
// bpf_get_ns_current_pid_tgid compares them.
type PidNSFilter struct {
	Dev, Ino uint64
}

// containerFilters jumps to exit when the current task is outside the
// cgroup or the PID namespace of the options.
func (g *gen) containerFilters(exit string) {
	if f := g.opts.Cgroup; f != nil {
		// The ancestor at the filter's level is the cgroup itself for a
		// task in it or below it; another cgroup, or 0 for a task above
		// that level, otherwise.
		g.emit(asm.Mov.Imm(asm.R1, int32(f.Level)), asm.FnGetCurrentAncestorCgroupId.Call())
		g.loadImm(asm.R1, int64(f.ID))
		g.emit(asm.JNE.Reg(asm.R0, asm.R1, exit))
	}
	if f := g.opts.PidNS; f != nil {
		// The helper fails (-EINVAL) for a task of another namespace.
		// Its struct bpf_pidns_info goes in the spare slot, as pid's.
		g.loadImm(asm.R1, int64(f.Dev))
		g.loadImm(asm.R2, int64(f.Ino))
		g.emit(
			asm.Mov.Reg(asm.R3, asm.RFP), asm.Add.Imm(asm.R3, -8),
			asm.Mov.Imm(asm.R4, 8),
			asm.FnGetNsCurrentPidTgid.Call(),
			asm.JNE.Imm(asm.R0, 0, exit),
		)
	}
}

package bpfprof

import (
	"fmt"
	"strconv"
	"strings"

	"gtrace/bpfstat"
)

// nameLen is the longest program name the kernel keeps; longer names
// are cut to it (BPF_OBJ_NAME_LEN less the terminating NUL).
const nameLen = 15

// Find returns the loaded program that target names: an id if it is a
// number, else a program name, which must be unique.
func Find(target string) (bpfstat.Program, error) {
	progs, err := bpfstat.Snapshot()
	if err != nil {
		return bpfstat.Program{}, err
	}
	return match(progs, target)
}

// match picks the program target names out of progs.
func match(progs []bpfstat.Program, target string) (bpfstat.Program, error) {
	if target == "" {
		return bpfstat.Program{}, fmt.Errorf("no program id or name given")
	}
	if id, err := strconv.ParseUint(target, 10, 32); err == nil {
		for _, p := range progs {
			if p.ID == uint32(id) {
				return p, nil
			}
		}
		return bpfstat.Program{}, fmt.Errorf("no BPF program with id %d", id)
	}
	name := target
	if len(name) > nameLen {
		name = name[:nameLen]
	}
	var found []bpfstat.Program
	for _, p := range progs {
		if p.Name == name {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return bpfstat.Program{}, fmt.Errorf("no BPF program named %q", target)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, p := range found {
		ids[i] = strconv.FormatUint(uint64(p.ID), 10)
	}
	return bpfstat.Program{}, fmt.Errorf("%d BPF programs are named %q, give one id: %s",
		len(found), target, strings.Join(ids, ", "))
}

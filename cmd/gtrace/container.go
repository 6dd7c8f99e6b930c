package main

import (
	"errors"
	"fmt"

	"gtrace/codegen"
	"gtrace/compiler"
	"gtrace/container"
)

// containerFlags are the flags that name a container to trace alone:
// --cgroup PATH, --pod UID with --container ID, and --pidns INODE.
type containerFlags struct {
	cgroup, pod, container, pidns string
}

// set records one of the flags.
func (f *containerFlags) set(flag, value string) error {
	if value == "" {
		return fmt.Errorf("USAGE: %s needs a value, got an empty one", flag)
	}
	switch flag {
	case "--cgroup":
		f.cgroup = value
	case "--pod":
		f.pod = value
	case "--container":
		f.container = value
	case "--pidns":
		f.pidns = value
	}
	return nil
}

// check refuses flags that do not go together.
func (f *containerFlags) check() error {
	switch {
	case f.cgroup != "" && f.pod != "":
		return errors.New("USAGE: --cgroup and --pod both name a cgroup: give one")
	case f.container != "" && f.pod == "":
		return errors.New("USAGE: --container names a container of the pod of --pod, which is missing")
	}
	return nil
}

// apply resolves the flags and sets the compiler's filters and
// $container_pid; nothing is read when no flag is given. The cgroup
// filter takes the cgroups below the one named, as a pod's containers
// are below it; $container_pid is the first process of the cgroup, or
// else of the PID namespace.
func (f *containerFlags) apply(copts *compiler.Options) error {
	var cg *container.Cgroup
	if f.cgroup != "" || f.pod != "" {
		root, err := container.V2Root("/proc/mounts")
		if err != nil {
			return err
		}
		switch {
		case f.cgroup != "":
			cg, err = container.Lookup(root, f.cgroup)
		default:
			cg, err = container.FindPod(root, f.pod)
			if err == nil && f.container != "" {
				cg, err = container.FindContainer(cg, f.container)
			}
		}
		if err != nil {
			return err
		}
		copts.Codegen.Cgroup = &codegen.CgroupFilter{ID: cg.ID, Level: cg.Level}
		copts.Check.ContainerPid = cg.FirstPid
	}
	if f.pidns != "" {
		ns, err := container.ParsePidNamespace(f.pidns)
		if err != nil {
			return err
		}
		copts.Codegen.PidNS = &codegen.PidNSFilter{Dev: ns.Dev, Ino: ns.Ino}
		if cg == nil {
			copts.Check.ContainerPid = ns.FirstPid
		}
	}
	return nil
}

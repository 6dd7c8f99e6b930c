package flow

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gtrace/kernel"
)

// Probes name how functions are probed.
type Probes string

const (
	Kprobe Probes = "kprobe" // kprobe and kretprobe
	Fentry Probes = "fentry" // fentry and fexit
)

// DefaultFuncs are the functions followed when none are given: those of
// the virtual file system, the page cache and its readahead, and the
// block device's file operations, which a read or write of a file or a
// block device goes through; about two hundred functions on Debian's
// 6.1 and 6.12 kernels.
var DefaultFuncs = []string{"vfs_*", "rw_verify_area", "filemap_*", "page_cache_*", "read_pages",
	"*readahead*", "folio_alloc*", "__folio_alloc*", "blkdev_*", "submit_bio*"}

// Options say what to follow.
type Options struct {
	// Syscalls are the system calls to follow, by name; none for all.
	Syscalls []string
	// Funcs are the globs of the kernel functions to show inside them;
	// none for DefaultFuncs.
	Funcs []string
	// Pid is the process to follow; 0 for the -c child (cpid).
	Pid int
	// Probes says how to probe the functions.
	Probes Probes
}

// validGlob is a function name with * wildcards, optionally after a
// module name and a colon.
var validGlob = regexp.MustCompile(`^([A-Za-z0-9_]+:)?[A-Za-z0-9_.*]+$`)

// Globs splits each of args at commas into the function globs they
// hold, and checks them.
func Globs(args []string) ([]string, error) {
	var globs []string
	for _, a := range args {
		for _, g := range strings.Split(a, ",") {
			if !validGlob.MatchString(g) {
				return nil, fmt.Errorf("invalid function glob %q: a function name with * wildcards, such as vfs_*", g)
			}
			globs = append(globs, g)
		}
	}
	return globs, nil
}

// Script returns the bpftrace program that records the flow o asks for.
func Script(o Options) (string, error) {
	target := "cpid"
	if o.Pid != 0 {
		target = fmt.Sprint(o.Pid)
	}
	filter := "pid == " + target
	var ids []string
	for _, name := range o.Syscalls {
		nr, ok := kernel.SyscallNumber(name)
		if !ok {
			return "", fmt.Errorf("unknown system call %q", name)
		}
		ids = append(ids, fmt.Sprintf("args.id == %d", nr))
	}
	if len(ids) > 0 {
		filter += " && (" + strings.Join(ids, " || ") + ")"
	}
	funcs, err := Globs(o.Funcs)
	if err != nil {
		return "", err
	}
	if len(funcs) == 0 {
		funcs = DefaultFuncs
	}
	var entry, exit string
	switch o.Probes {
	case Kprobe:
		entry, exit = "kprobe", "kretprobe"
	case Fentry:
		entry, exit = "fentry", "fexit"
	default:
		return "", errors.New("no way to probe kernel functions")
	}
	points := func(provider string) string {
		var ps []string
		for _, f := range funcs {
			ps = append(ps, provider+":"+f)
		}
		return strings.Join(ps, ",\n")
	}
	// A glob that matches nothing, or a function the kernel refuses,
	// is left out with a warning: a flow shows what it can.
	return `config = { missing_probes = warn; max_probes = 1000000; max_bpf_progs = 1000000; print_maps_on_exit = 0 }

tracepoint:raw_syscalls:sys_enter /` + filter + `/ {
	@flow[tid] = 1;
	print((0, nsecs, cpu, tid, args.id, pid, comm));
}

tracepoint:raw_syscalls:sys_exit /@flow[tid]/ {
	delete(@flow[tid]);
	print((1, nsecs, cpu, tid, args.id));
}

` + points(entry) + ` /@flow[tid]/ {
	print((2, nsecs, cpu, tid, func));
}

` + points(exit) + ` /@flow[tid]/ {
	print((3, nsecs, cpu, tid, func));
}
`, nil
}

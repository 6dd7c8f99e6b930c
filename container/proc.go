package container

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// First returns the process of pids that started first, by its start
// time in proc's PID/stat, the lower pid of two that started in the same
// clock tick; ok is false when none of them is still there. This is the
// host pid kubectl-trace gives a script as $container_pid: a container's
// first process, its init.
func First(proc string, pids []int) (pid int, ok bool) {
	var first uint64
	for _, p := range pids {
		start, err := startTime(proc, p)
		if err != nil {
			continue
		}
		if !ok || start < first || start == first && p < pid {
			pid, first, ok = p, start, true
		}
	}
	return pid, ok
}

// startTime reads a process's start time, in clock ticks after boot:
// the 22nd field of proc/PID/stat, the 20th after the command name,
// which may hold spaces and parentheses.
func startTime(proc string, pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s/%d/stat: no command name", proc, pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return 0, fmt.Errorf("%s/%d/stat: %d fields after the command name, want 20 or more", proc, pid, len(fields))
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// PidNamespace is a PID namespace, named by its inode number, as `ls -l
// /proc/PID/ns/pid` shows it: pid:[4026531836].
type PidNamespace struct {
	// Dev is the device of the namespace file system, which
	// bpf_get_ns_current_pid_tgid takes with the inode.
	Dev, Ino uint64
}

// ParsePidNamespace reads a --pidns value: the inode number, or the
// link text pid:[INODE].
func ParsePidNamespace(s string) (PidNamespace, error) {
	num := strings.TrimSuffix(strings.TrimPrefix(s, "pid:["), "]")
	ino, err := strconv.ParseUint(num, 10, 64)
	if err != nil || ino == 0 {
		return PidNamespace{}, fmt.Errorf("%q is not a PID namespace: want its inode number, such as 4026531836 or pid:[4026531836]", s)
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return PidNamespace{}, fmt.Errorf("reading the namespace file system's device: %w", err)
	}
	return PidNamespace{Dev: st.Dev, Ino: ino}, nil
}

// Pids returns the processes of proc (a /proc) in the namespace.
func (ns PidNamespace) Pids(proc string) ([]int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join(proc, e.Name(), "ns", "pid"), &st) == nil && st.Ino == ns.Ino {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// FirstPid returns the namespace's first process, its init.
func (ns PidNamespace) FirstPid() (int, error) {
	pids, err := ns.Pids("/proc")
	if err != nil {
		return 0, err
	}
	if pid, ok := First("/proc", pids); ok {
		return pid, nil
	}
	return 0, fmt.Errorf("no process is in PID namespace %d", ns.Ino)
}

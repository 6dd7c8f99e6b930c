package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	goruntime "runtime"
	"time"

	"golang.org/x/sys/unix"
)

// RunToEntry lets the held child exec its command and run until the
// program's entry point, where the dynamic loader has mapped its
// libraries, and holds it there, stopped, until Release: dw_ustack
// reads the unwind tables of what it maps before the probes load. As
// in bpftrace, what the loader does before is not traced.
//
// The child is traced with ptrace only to get there: a breakpoint at
// the entry point, then the original instruction put back, and the
// child detached with a SIGSTOP, which Release continues.
func (c *Child) RunToEntry() error {
	// Every ptrace request must come from the thread that attached.
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := c.waitHeld(); err != nil {
		return err
	}
	pid := c.Pid
	if err := unix.PtraceSeize(pid); err != nil {
		return fmt.Errorf("-c: trace the child: %w", err)
	}
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXEC); err != nil {
		return fmt.Errorf("-c: trace the child: %w", err)
	}
	unix.Kill(pid, unix.SIGCONT)
	// Let the shell go until it execs the command.
	for {
		status, err := waitTraced(pid)
		if err != nil {
			return err
		}
		if status.TrapCause() == unix.PTRACE_EVENT_EXEC {
			break
		}
		if err := unix.PtraceCont(pid, 0); err != nil {
			return fmt.Errorf("-c: continue the child: %w", err)
		}
	}
	entry, err := entryPoint(pid)
	if err != nil {
		return err
	}
	orig := make([]byte, 8)
	if _, err := unix.PtracePeekData(pid, uintptr(entry), orig); err != nil {
		return fmt.Errorf("-c: read the entry point: %w", err)
	}
	trap := append([]byte{0xcc}, orig[1:]...) // int3
	if _, err := unix.PtracePokeData(pid, uintptr(entry), trap); err != nil {
		return fmt.Errorf("-c: set a breakpoint at the entry point: %w", err)
	}
	for sig := 0; ; {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return fmt.Errorf("-c: continue the child: %w", err)
		}
		status, err := waitTraced(pid)
		if err != nil {
			return err
		}
		if status.StopSignal() == unix.SIGTRAP && status.TrapCause() == 0 {
			break
		}
		// The program's own signals go on to it.
		sig = 0
		if status.TrapCause() < 0 {
			sig = int(status.StopSignal())
		}
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return fmt.Errorf("-c: read the child's registers: %w", err)
	}
	regs.SetPC(entry)
	if _, err := unix.PtracePokeData(pid, uintptr(entry), orig); err != nil {
		return fmt.Errorf("-c: restore the entry point: %w", err)
	}
	if err := unix.PtraceSetRegs(pid, &regs); err != nil {
		return fmt.Errorf("-c: set the child's registers: %w", err)
	}
	// Detach with a SIGSTOP in place of the trap, then wait for the
	// stop to take hold: a SIGCONT from Release before it would be lost.
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(unix.SIGSTOP), 0, 0); errno != 0 {
		return fmt.Errorf("-c: detach from the child: %w", errno)
	}
	for deadline := time.Now().Add(5 * time.Second); !stopped(pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("-c: the child did not stop at its entry point")
		}
	}
	return nil
}

// stopped says whether process pid is stopped, by its state in
// /proc/PID/stat.
func stopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command, which is in parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}

// waitHeld returns when the child's shell has stopped itself, before
// its exec.
func (c *Child) waitHeld() error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.Pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("-c: wait for the child: %w", err)
		}
		return nil
	}
}

// waitTraced waits for the traced child's next stop; its exit is an
// error.
func waitTraced(pid int) (unix.WaitStatus, error) {
	var status unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &status, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return status, fmt.Errorf("-c: wait for the child: %w", err)
		}
		if status.Exited() || status.Signaled() {
			return status, fmt.Errorf("-c: the child ended before its entry point")
		}
		return status, nil
	}
}

// atEntry is the auxiliary vector's key of the program's entry point.
const atEntry = 9

// entryPoint reads the program's entry point, AT_ENTRY, from the
// auxiliary vector of process pid.
func entryPoint(pid int) (uint64, error) {
	auxv, err := os.ReadFile(fmt.Sprintf("/proc/%d/auxv", pid))
	if err != nil {
		return 0, fmt.Errorf("-c: %w", err)
	}
	for i := 0; i+16 <= len(auxv); i += 16 {
		if binary.LittleEndian.Uint64(auxv[i:]) == atEntry {
			return binary.LittleEndian.Uint64(auxv[i+8:]), nil
		}
	}
	return 0, fmt.Errorf("-c: no entry point in the child's auxiliary vector")
}

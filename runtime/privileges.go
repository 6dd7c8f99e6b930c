package runtime

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"gtrace/probe"
)

// Capability bits, from linux/capability.h.
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// lockdownFile shows the kernel's lockdown modes, the current one in
// brackets: "none [integrity] confidentiality".
const lockdownFile = "/sys/kernel/security/lockdown"

// CheckPrivileges names, before anything is loaded, a capability that
// gtrace lacks or a kernel lockdown that forbids tracing. Like bpftrace
// v0.26 (check_privileges), it reads the effective capability set, not
// the user id: root with CAP_BPF dropped is refused, and CAP_SYS_ADMIN
// stands for both CAP_BPF and CAP_PERFMON.
func CheckPrivileges() error {
	eff, err := effectiveCaps()
	if err != nil {
		return err
	}
	return privilegeError(eff, lockdownMode(lockdownFile))
}

// CheckAdmin names a missing CAP_SYS_ADMIN before what needs it asks the
// kernel, which would only say "operation not permitted": listing every
// BPF program (BPF_PROG_GET_NEXT_ID), opening one by id and turning the
// BPF statistics on take CAP_SYS_ADMIN, where CAP_BPF is not enough.
// why says what needs it, for the error.
func CheckAdmin(why string) error {
	eff, err := effectiveCaps()
	if err != nil {
		return err
	}
	return adminError(eff, why)
}

// adminError is CheckAdmin on an effective capability set.
func adminError(eff uint64, why string) error {
	if eff&(1<<capSysAdmin) == 0 {
		return fmt.Errorf("missing CAP_SYS_ADMIN capability: %s; please run it as the root user, or with CAP_SYS_ADMIN", why)
	}
	return nil
}

// effectiveCaps reads the effective capability set of the process.
func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, fmt.Errorf("read capabilities: %w", err)
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}

// privilegeError is CheckPrivileges on an effective capability set and a
// lockdown mode.
func privilegeError(eff uint64, lockdown string) error {
	if eff&(1<<capSysAdmin) == 0 {
		for _, c := range []struct {
			bit  uint
			name string
		}{{capBPF, "CAP_BPF"}, {capPerfmon, "CAP_PERFMON"}} {
			if eff&(1<<c.bit) == 0 {
				return fmt.Errorf("missing %s capability: please run gtrace as the root user, or with CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)", c.name)
			}
		}
	}
	// As in bpftrace, only confidentiality is refused up front: it
	// blocks reading kernel memory, perf events and tracefs, while
	// integrity blocks only bpf_probe_write_user.
	if lockdown == "confidentiality" {
		return errors.New("kernel lockdown is enabled and set to 'confidentiality', which blocks the parts of BPF that gtrace needs (reading kernel memory, perf events, tracefs)")
	}
	return nil
}

// lockdownMode returns the kernel's current lockdown mode, or "" where
// the kernel does not say.
func lockdownMode(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(string(b)) {
		if len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']' {
			return f[1 : len(f)-1]
		}
	}
	return ""
}

// lockdownNote adds the kernel's lockdown mode to a refusal (EPERM) when
// the kernel is locked down, as that may be what refused.
func lockdownNote(err error) error {
	if !errors.Is(err, unix.EPERM) {
		return err
	}
	if m := lockdownMode(lockdownFile); m != "" && m != "none" {
		// An attach error's cause is printed on its own: the note goes
		// with it.
		var ae *probe.AttachError
		if errors.As(err, &ae) {
			return &probe.AttachError{Probe: ae.Probe, Err: fmt.Errorf("%w (kernel lockdown is set to '%s')", ae.Err, m)}
		}
		return fmt.Errorf("%w (kernel lockdown is set to '%s')", err, m)
	}
	return err
}

package runtime

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"gtrace/codegen"
)

// loadError explains why the kernel refused a program, in words, naming
// its probe; the verifier's whole log only with -v.
func (r *run) loadError(p *codegen.Program, err error) error {
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		err = lockdownNote(err)
		if errors.Is(err, unix.EPERM) && os.Geteuid() == 0 && p.Prog.Probe.AttachType() != 0 {
			return fmt.Errorf("%s: the kernel refused the program although gtrace runs as root: this kernel does not allow %s probes: %w",
				p.Prog.Probe.Name, strings.SplitN(p.Prog.Probe.Name, ":", 2)[0], err)
		}
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%s: loading BPF programs needs root or CAP_BPF and CAP_PERFMON: %w", p.Prog.Probe.Name, err)
		}
		return fmt.Errorf("%s: load program: %w", p.Prog.Probe.Name, err)
	}
	cause := "the program was rejected"
	for i := len(ve.Log) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(ve.Log[i]); isCause(line) {
			cause = line
			break
		}
	}
	msg := fmt.Sprintf("the BPF verifier rejected the program of %s: %s", p.Prog.Probe.Name, cause)
	if r.opts.Verbose {
		msg += "\nverifier log:\n" + strings.Join(ve.Log, "\n")
	} else {
		msg += " (run with -v for the verifier's log)"
	}
	return errors.New(msg)
}

// isCause reports whether a verifier log line states a reason, rather
// than statistics, a register state or an instruction.
func isCause(line string) bool {
	if line == "" || line[0] >= '0' && line[0] <= '9' || line[0] == 'R' && len(line) > 1 && line[1] >= '0' && line[1] <= '9' {
		return false
	}
	for _, p := range []string{"processed ", "verification time", "stack depth", "cur state", "old state", "from ", ";"} {
		if strings.HasPrefix(line, p) {
			return false
		}
	}
	return true
}

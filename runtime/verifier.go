package runtime

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"gtrace/codegen"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// loadError explains why the kernel refused a program, in words, at the
// script line the verifier refused or else at the probe's attach point.
// With -v the verifier's whole log comes first.
func (r *run) loadError(p *codegen.Program, err error) error {
	at := token.Span{Start: token.NoPos, End: token.NoPos}
	if p.Prog.Attach != nil {
		at = p.Prog.Attach.Span()
	}
	name := p.Prog.Probe.Name
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		if errors.Is(err, unix.EPERM) {
			// cilium/ebpf suggests raising RLIMIT_MEMLOCK on any EPERM
			// before the verifier ran, but BPF memory is charged to the
			// memory cgroup since Linux 5.11, older than any kernel
			// gtrace's programs load on (bpf_loop is 5.17's).
			perm := lockdownNote(unix.EPERM)
			if os.Geteuid() == 0 && p.Prog.Probe.AttachType() != 0 {
				return located(at, "%s: the kernel refused the program although gtrace runs as root: this kernel does not allow %s probes: %v",
					name, strings.SplitN(name, ":", 2)[0], perm)
			}
			return located(at, "%s: loading BPF programs needs root or CAP_BPF and CAP_PERFMON: %v", name, perm)
		}
		return located(at, "%s: load program: %v", name, err)
	}
	cause, insn := "the program was rejected", -1
	for i := len(ve.Log) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(ve.Log[i]); isCause(line) {
			cause, insn = line, refusedInsn(ve.Log, i)
			break
		}
	}
	if insn >= 0 {
		spec := r.out.Spec.Programs[p.Name]
		if src := codegen.SourceAt(spec.Instructions, asm.RawInstructionOffset(insn)); src != nil && src.Span.Start != token.NoPos {
			at = src.Span
		}
	}
	msg := fmt.Sprintf("the BPF verifier rejected the program of %s: %s%s", name, cause, helperNote(cause))
	if r.opts.Verbose {
		fmt.Fprintf(r.opts.Stderr, "verifier log of %s:\n%s\n", name, strings.Join(ve.Log, "\n"))
	} else {
		msg += " (run with -v for the verifier's log)"
	}
	return located(at, "%s", msg)
}

// located is an error the command line prints at span of the script.
func located(span token.Span, format string, args ...any) error {
	return diag.List{{Span: span, Msg: fmt.Sprintf(format, args...)}}
}

var (
	// insnLine is a verifier log line about one instruction: its dump,
	// "12: (85) call ...", or the registers before it, "12: R0=...".
	insnLine = regexp.MustCompile(`^(\d+): `)
	// insnNamed is an instruction a cause names: "unreachable insn 4",
	// "infinite loop detected at insn 1".
	insnNamed = regexp.MustCompile(`\binsn (\d+)\b`)
)

// refusedInsn finds the instruction the verifier refused, by the cause at
// log[i], or by the last instruction the log shows before it; -1 if none.
func refusedInsn(log []string, i int) int {
	if m := insnNamed.FindStringSubmatch(log[i]); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	for ; i >= 0; i-- {
		if m := insnLine.FindStringSubmatch(strings.TrimSpace(log[i])); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return -1
}

// regState is a verifier log line of register states, "R0=1 R10=fp0",
// unlike a cause about a register, "R0 invalid mem access 'scalar'".
var regState = regexp.MustCompile(`^R\d+(_\w+)?=`)

// isCause reports whether a verifier log line states a reason, rather
// than statistics, a register state or an instruction.
func isCause(line string) bool {
	if line == "" || line[0] >= '0' && line[0] <= '9' || regState.MatchString(line) {
		return false
	}
	for _, p := range []string{"processed ", "verification time", "stack depth", "cur state", "old state", "from ", ";"} {
		if strings.HasPrefix(line, p) {
			return false
		}
	}
	return true
}

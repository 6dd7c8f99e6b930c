package runtime

import "strings"

// helperNote says why the verifier refused a helper that the kernel
// offers only to some: "" for any other cause.
func helperNote(cause string) string {
	if strings.Contains(cause, "cannot use helper bpf_probe_write_user") {
		return ": this kernel does not let BPF programs write user memory (write_user() needs CAP_SYS_ADMIN and a kernel not locked down)"
	}
	return ""
}

package cpp

import (
	"strings"
	"testing"
)

func TestSyscallHeader(t *testing.T) {
	for _, h := range []string{"syscall.h", "sys/syscall.h", "asm/unistd.h", "asm/unistd_64.h"} {
		out, errs := preprocess(t, "#include <"+h+">\nBEGIN { @ = (__NR_read, __NR_execve); }")
		if want := "BEGIN { @ = (0, 59); }"; errs != "" || !strings.Contains(out, want) {
			t.Errorf("%s: got %q, errors %q; want %q", h, out, errs, want)
		}
	}
}

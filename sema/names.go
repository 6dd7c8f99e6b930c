package sema

import (
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"gtrace/kernel"
)

// NameSize is the size of the strings strerror() and syscall_name()
// return, as in bpftrace.
const NameSize = 64

// Names are the texts strerror() and syscall_name() give, by number,
// and the text of any other number. Code generation puts them in a
// table the programs read.
type Names struct {
	Texts   []string
	Unknown string
}

// ErrnoNames are the texts of the errno values: the C library's, as Go
// knows them, capitalised.
func ErrnoNames() Names {
	var texts []string
	for n := 0; n < 256; n++ {
		s := syscall.Errno(n).Error()
		if n == 0 {
			s = "success"
		}
		if strings.HasPrefix(s, "errno ") {
			s = ""
		}
		texts = append(texts, capitalise(s))
	}
	return Names{Texts: texts, Unknown: "Unknown error"}
}

// SyscallNames are the names of the system calls, by number.
func SyscallNames() Names {
	return Names{Texts: kernel.SyscallNames(), Unknown: "Unknown syscall"}
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

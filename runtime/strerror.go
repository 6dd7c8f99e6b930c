package runtime

import (
	"errors"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Strerror words the system error in err as C's strerror does, which
// bpftrace prints: "No such file or directory". Go words the same table
// in lower case. Other errors keep their own words.
func Strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

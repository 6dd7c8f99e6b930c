package output

import (
	"strconv"
	"strings"
	"syscall"
)

// HelperError is a helper call of the running program that failed, as
// -k reports it.
type HelperError struct {
	Helper  string // as bpftrace names it: "probe_read_user"
	Retcode int64  // the helper's result, a negative errno; 0 for a lookup
	// Located is the warning rendered at its place in the script, with
	// MessageMark where the message goes, and Loc that place, for JSON.
	Located string
	Loc     Location
}

// MessageMark stands for the message in HelperError.Located.
const MessageMark = "\x00"

// Text is bpftrace's message for a failed helper, the helper's error
// code in words, or for a lookup what it means.
func (e *HelperError) Text() string {
	if e.Helper == "map_lookup_elem" {
		return "Can't lookup map element because it does not exist."
	}
	return strerror(e.Retcode)
}

// strerror words -retcode as C's strerror does.
func strerror(retcode int64) string {
	if retcode == 0 {
		return "Success"
	}
	s := syscall.Errno(-retcode).Error()
	return strings.ToUpper(s[:1]) + s[1:]
}

// HelperError prints the warning on stderr, at its place in the script,
// with the helper and its code on the line after the message.
func (t *Text) HelperError(e *HelperError) error {
	msg := e.Text() + "\nAdditional Info - helper: " + e.Helper + ", retcode: " + strconv.FormatInt(e.Retcode, 10)
	return write(t.errw, strings.Replace(e.Located, MessageMark, msg, 1))
}

// HelperError prints a helper_error record: the code in words, the
// helper, the code, and where in the script.
func (j *JSON) HelperError(e *HelperError) error {
	var b strings.Builder
	b.WriteString(`{"type": "helper_error", "msg": `)
	writeJSONString(&b, strerror(e.Retcode))
	b.WriteString(`, "helper": `)
	writeJSONString(&b, e.Helper)
	b.WriteString(`, "retcode": ` + strconv.FormatInt(e.Retcode, 10) + `, "filename": `)
	writeJSONString(&b, e.Loc.File)
	b.WriteString(`, "line": ` + strconv.Itoa(e.Loc.Line) + `, "col": ` + strconv.Itoa(e.Loc.Col) + "}\n")
	return write(j.out, b.String())
}

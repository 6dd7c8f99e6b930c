package output

import (
	"strconv"
	"strings"
)

// Location is where an errorf() or warnf() call is in the script.
type Location struct {
	File      string
	Line, Col int
}

// MessagePrinter is a Printer that prints errorf() and warnf() itself,
// as JSON output does; text output leaves them to stderr, located as
// the checker's diagnostics are.
type MessagePrinter interface {
	Message(isError bool, msg string, at Location) error
}

// Message prints an errorf() or warnf() as a record of its own, with its
// place in the script (the macro calls it is in are left out).
func (j *JSON) Message(isError bool, msg string, at Location) error {
	typ := "warnf"
	if isError {
		typ = "errorf"
	}
	var b strings.Builder
	b.WriteString(`{"type": "` + typ + `", "msg": `)
	writeJSONString(&b, msg)
	b.WriteString(`, "filename": `)
	writeJSONString(&b, at.File)
	b.WriteString(`, "line": ` + strconv.Itoa(at.Line) + `, "col": ` + strconv.Itoa(at.Col) + "}\n")
	return write(j.out, b.String())
}

package diag

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"gtrace/lang/token"
)

// Error is one diagnostic: an error or, when Warning is set, a warning.
type Error struct {
	Span    token.Span
	Msg     string
	Warning bool
	// File, when set, is the file Span is in, such as an included
	// header, in place of the one given to Render.
	File *token.File
	// Notes are places that explain the diagnostic, such as the call
	// of the macro it is in, printed after it as diagnostics of its
	// kind. A note's Warning and Notes are not used.
	Notes []*Error
	// Brief prints only the located first line, without the source:
	// the message of errorf() and warnf() at their call.
	Brief bool
}

func (e *Error) Error() string { return e.Msg }

// List collects the diagnostics of a stage.
type List []*Error

// Add appends an error at span with a formatted message.
func (l *List) Add(span token.Span, format string, args ...any) {
	*l = append(*l, &Error{Span: span, Msg: fmt.Sprintf(format, args...)})
}

// Warn appends a warning at span with a formatted message.
func (l *List) Warn(span token.Span, format string, args ...any) {
	*l = append(*l, &Error{Span: span, Msg: fmt.Sprintf(format, args...), Warning: true})
}

// Sort orders the list by position, keeping the order of diagnostics that
// start at the same place.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Span, l[j].Span
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End < b.End
	})
}

// HasErrors reports whether the list holds anything but warnings.
func (l List) HasErrors() bool {
	for _, e := range l {
		if !e.Warning {
			return true
		}
	}
	return false
}

// Err returns the list as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error returns the first message, and how many more there are.
func (l List) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Msg
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0].Msg, len(l)-1)
}

// Render prints errs as bpftrace v0.26 does. Errors come first, then
// warnings, each in list order. A span on one line prints as
//
//	FILE:LINE:COL-COL: ERROR: message
//	source line, tabs expanded to four spaces
//	~~~ under the span
//
// and a span over several lines prints FILE:LINE-LINE and those lines as
// they are, with no underline (bpftrace 0.17 printed no lines at all).
func Render(w io.Writer, f *token.File, errs List) {
	for _, warning := range []bool{false, true} {
		for _, e := range errs {
			if e.Warning != warning {
				continue
			}
			render(w, f, e, e.Warning)
			for _, n := range e.Notes {
				render(w, f, n, e.Warning)
			}
		}
	}
}

func render(w io.Writer, f *token.File, e *Error, warning bool) {
	kind := "ERROR"
	if warning {
		kind = "WARNING"
	}
	if e.File != nil {
		f = e.File
	}
	if e.Span.Start == token.NoPos || f == nil {
		fmt.Fprintf(w, "%s: %s\n", kind, e.Msg)
		return
	}
	begin := f.Position(e.Span.Start)
	end := f.Position(e.Span.End)
	if end.Line < begin.Line || (end.Line == begin.Line && end.Column < begin.Column) {
		end = begin
	}
	if begin.Line != end.Line {
		fmt.Fprintf(w, "%s:%d-%d: %s: %s\n", f.Name, begin.Line, end.Line, kind, e.Msg)
		for n := begin.Line; n <= end.Line; n++ {
			fmt.Fprintln(w, f.Line(n))
		}
		return
	}
	fmt.Fprintf(w, "%s:%d:%d-%d: %s: %s\n", f.Name, begin.Line, begin.Column, end.Column, kind, e.Msg)
	if e.Brief {
		return
	}
	line := f.Line(begin.Line)
	var src, mark strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		m := byte(' ')
		if i >= begin.Column-1 {
			m = '~'
		}
		if c == '\t' {
			src.WriteString("    ")
		} else {
			src.WriteByte(c)
		}
		if i >= end.Column-1 {
			continue
		}
		if c == '\t' {
			mark.WriteString(strings.Repeat(string(m), 4))
		} else {
			mark.WriteByte(m)
		}
	}
	fmt.Fprintln(w, src.String())
	fmt.Fprintln(w, mark.String())
}

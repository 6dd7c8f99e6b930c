package class

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gtrace/compiler"
	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// Filter is a --filter predicate in the bpftrace language, with the
// struct's members read from the object: "bi_iter.bi_size > 4096" is
// "$o->bi_iter.bi_size > 4096".
type Filter struct {
	text string // as the user wrote it
	expr string // as the script has it
	// pos maps each byte of expr to the byte of text it comes from.
	pos []int
}

// ParseFilter reads a --filter predicate. members are the struct's
// member names: a name among them, not after "." or "->", is the
// object's member; others, such as pid or comm, keep their meaning.
func ParseFilter(text string, members map[string]bool) (*Filter, error) {
	f := &Filter{text: text}
	if strings.TrimSpace(text) == "" {
		return nil, optionError("--filter", text, 0, len(text), "empty predicate")
	}
	emit := func(s string, from int) {
		f.expr += s
		for range s {
			f.pos = append(f.pos, from)
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(text) {
				return nil, optionError("--filter", text, i, len(text), "unterminated string")
			}
			for k := i; k <= j; k++ {
				emit(text[k:k+1], k)
			}
			i = j + 1
		case c == '$' || c == '@' || c == ';' || c == '{' || c == '}':
			return nil, optionError("--filter", text, i, i+1, fmt.Sprintf("%q is not allowed in a predicate: it reads the object's members, and builtins such as pid or comm", c))
		case isIdentStart(c) || isDigit(c):
			j := i
			for j < len(text) && (isIdentStart(text[j]) || isDigit(text[j])) {
				j++
			}
			word := text[i:j]
			prev := strings.TrimRight(f.expr, " \t")
			member := isIdentStart(c) && members[word] &&
				!strings.HasSuffix(prev, ".") && !strings.HasSuffix(prev, "->")
			if member {
				emit("$o->", i)
			}
			for k := i; k < j; k++ {
				emit(text[k:k+1], k)
			}
			i = j
		default:
			emit(text[i:i+1], i)
			i++
		}
	}
	return f, nil
}

// fieldPath is a --fields entry: members, with "." or "->" between
// them, and array indexes.
var fieldPath = regexp.MustCompile(`^[A-Za-z_]\w*((\.|->)[A-Za-z_]\w*|\[\d+\])*$`)

// ParseFields reads a --fields list, comma separated.
func ParseFields(text string) ([]string, error) {
	var fields []string
	off := 0
	for _, f := range strings.Split(text, ",") {
		if !fieldPath.MatchString(f) {
			return nil, optionError("--fields", text, off, off+len(f),
				fmt.Sprintf("%q is not a member path, such as bi_iter.bi_size", f))
		}
		fields = append(fields, f)
		off += len(f) + 1
	}
	return fields, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// optionError is an error in an option's value, located in it as the
// compiler locates errors in a script: "--filter:1:3-7: ERROR: ...".
func optionError(option, text string, start, end int, msg string) error {
	var l diag.List
	l.Add(token.Span{Start: token.Pos(start), End: token.Pos(end)}, "%s", msg)
	return &compiler.Error{File: token.NewFile(option, []byte(text)), Diags: l}
}

// Locate moves an error that the compiler or the runtime found in the
// part of the script copied from an option into that option's text.
// Other errors in the script lose their place, which the user never
// wrote: their message says which probe.
func (s *Script) Locate(err error) error {
	located, ok := err.(*compiler.Error)
	if !ok {
		return err
	}
	var msgs []string
	for _, d := range located.Diags {
		if d.Warning || d.File != nil {
			continue
		}
		msgs = append(msgs, d.Msg)
		for _, r := range s.regions {
			start, end := int(d.Span.Start), int(d.Span.End)
			if start < r.start || start >= r.end {
				continue
			}
			end = min(max(end, start+1), r.end)
			from, to := r.pos[start-r.start], r.pos[end-1-r.start]+1
			return optionError(r.option, r.text, from, to, d.Msg)
		}
	}
	if len(msgs) == 0 {
		return err
	}
	return errors.New(strings.Join(msgs, "\n"))
}

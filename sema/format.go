package sema

import (
	"errors"
	"strings"

	"gtrace/lang/ast"
	"gtrace/output"
)

// checkFormat checks a printf-style format string against its arguments,
// with bpftrace's messages.
func (c *checker) checkFormat(call *ast.Call, format *ast.StrLit, types []*Type) {
	f, err := output.ParseFormat(format.Value)
	if err != nil {
		at := ast.Node(call)
		if errors.Is(err, output.ErrTooWide) {
			at = format // the call is fine, only its format is not
		}
		c.errorf(at, "%s: %s", call.Name, capitalize(err.Error()))
		return
	}
	args := make([]output.Arg, len(types))
	for i, t := range types {
		if t.Kind == Invalid {
			return // already reported
		}
		args[i] = output.Arg{Class: argClass(t), Type: t.String()}
	}
	if err := f.Check(args); err != nil {
		c.errorf(call, "%s: %s", call.Name, capitalize(err.Error()))
	}
}

func argClass(t *Type) output.ArgClass {
	switch t.Kind {
	case Int:
		return output.ArgInt
	case Bool:
		return output.ArgBool
	case Ksym, Pointer:
		return output.ArgPointer
	case Buffer:
		return output.ArgBuffer
	case Void, Invalid:
		return output.ArgNone
	}
	return output.ArgOther
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

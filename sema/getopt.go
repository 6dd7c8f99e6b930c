package sema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// ProgramOption is a named program option, `--name[=value]` after `--`
// on the command line, that the script reads with getopt().
type ProgramOption struct {
	Name        string
	Description string
	// Default is the default's source text, to compare uses of the
	// option, and Span is where the first use is.
	Default string
	Span    token.Span
	// failed is set once the option's value has been reported bad.
	failed bool
}

// getopt checks getopt(name[, default[, description]]), which stands for
// the option's value, known at compile time: the command line's, else
// the default. The default's type is the option's: a bool (none given),
// an unsigned integer, a signed one when negative, or a string.
func (c *checker) getopt(call *ast.Call) *Type {
	args := call.Args
	if len(args) < 1 || len(args) > 3 {
		c.errorf(call, "The 'getopt' function can take a maximum of three arguments and a minimum of one argument.")
		return nil
	}
	name, ok := args[0].(*ast.StrLit)
	if !ok {
		c.errorf(args[0], "First argument to 'getopt' must be a string literal.")
		return nil
	}
	def := ast.Expr(&ast.BoolLit{At: ast.At{Sp: call.Span()}})
	if len(args) >= 2 {
		def = args[1]
		if _, _, ok := optionInt(def); !ok && !isLit[*ast.StrLit](def) && !isLit[*ast.BoolLit](def) {
			c.errorf(def, "Second argument to 'getopt' must be a string literal, integer literal, or a boolean literal.")
			return nil
		}
	}
	desc := ""
	if len(args) == 3 {
		s, ok := args[2].(*ast.StrLit)
		if !ok {
			c.errorf(args[2], "Function 'getopt' requires the third parameter to be a string literal.")
			return nil
		}
		desc = s.Value
	}
	opt := c.programOption(call, name.Value, defaultText(def), desc)
	if opt == nil {
		return nil
	}
	value, err := c.optionValue(name.Value, def)
	if err != nil {
		if !opt.failed && !c.quiet {
			opt.failed = true
			c.errorAt(token.Span{Start: token.NoPos, End: token.NoPos}, "%v", err)
		}
		return nil
	}
	c.prog.Stands[call] = value
	return c.expr(value)
}

// isLit says whether e is a literal of type T.
func isLit[T ast.Expr](e ast.Expr) bool {
	_, ok := e.(T)
	return ok
}

// optionInt reads an integer default: a literal, or a negated one,
// which makes the option signed.
func optionInt(e ast.Expr) (n int64, signed, ok bool) {
	switch e := e.(type) {
	case *ast.IntLit:
		return int64(e.Value), false, true
	case *ast.Unary:
		if lit, ok := e.X.(*ast.IntLit); ok && e.Op == token.SUB {
			return -int64(lit.Value), true, true
		}
	}
	return 0, false, false
}

// defaultText is how an error names a default.
func defaultText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StrLit:
		return e.Value
	case *ast.BoolLit:
		return strconv.FormatBool(e.Value)
	case *ast.IntLit:
		return strconv.FormatUint(e.Value, 10)
	}
	n, _, _ := optionInt(e)
	return strconv.FormatInt(n, 10)
}

// programOption records the option name of a getopt() call, whose
// default and description must be those of its other uses.
func (c *checker) programOption(call *ast.Call, name, def, desc string) *ProgramOption {
	if c.info.Options == nil {
		c.info.Options = map[string]*ProgramOption{}
	}
	opt := c.info.Options[name]
	if opt == nil {
		opt = &ProgramOption{Name: name, Default: def, Description: desc, Span: call.Span()}
		c.info.Options[name] = opt
		return opt
	}
	if opt.Span == call.Span() {
		return opt
	}
	if opt.Default != def {
		c.errorf(call, "Command line option '%s' needs to have the same default value in all places it is used. Previous default value: %s", name, opt.Default)
		return nil
	}
	if desc != "" && opt.Description != "" && desc != opt.Description {
		c.errorf(call, "Command line option '%s' must have the same description in all places it's used. Hint: You can wrap it in a macro", name)
		return nil
	}
	if opt.Description == "" {
		opt.Description = desc
	}
	return opt
}

// optionValue is the literal the option name stands for: its value on
// the command line, read as its default's type, or the default.
func (c *checker) optionValue(name string, def ast.Expr) (ast.Expr, error) {
	at := ast.At{Sp: def.Span()}
	v, given := c.namedOption(name)
	switch d := def.(type) {
	case *ast.BoolLit:
		b := d.Value
		if given {
			ok := true
			if b = true; v != nil {
				b, ok = parseBool(configValue{str: *v})
			}
			if !ok {
				return nil, optionError(name, *v, "expects a boolean (e.g. 'true')")
			}
		}
		return &ast.BoolLit{At: at, Value: b}, nil
	case *ast.StrLit:
		s := d.Value
		if given {
			if v == nil {
				return nil, optionError(name, "true", "expects a string")
			}
			s = *v
		}
		return &ast.StrLit{At: at, Value: s}, nil
	}
	n, signed, _ := optionInt(def)
	typ := &ast.TypeExpr{At: at, Name: "uint64"}
	if signed {
		typ.Name = "int64"
	}
	if given {
		if v == nil {
			return nil, optionError(name, "true", "expects an integer")
		}
		var err error
		if n, err = parseOptionInt(*v, signed); err != nil {
			return nil, optionError(name, *v, err.Error())
		}
	}
	return &ast.Cast{At: at, Type: typ, X: &ast.IntLit{At: at, Value: uint64(n)}}, nil
}

// parseOptionInt reads an integer option's value, as Go spells integer
// literals (0x, 0b, 0o and 0 prefixes, underscores).
func parseOptionInt(s string, signed bool) (int64, error) {
	var n int64
	var err error
	if signed {
		n, err = strconv.ParseInt(s, 0, 64)
	} else {
		var u uint64
		u, err = strconv.ParseUint(s, 0, 64)
		n = int64(u)
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, errors.New("value is out of range")
	}
	if err != nil {
		return 0, errors.New("invalid integer")
	}
	return n, nil
}

func optionError(name, value, msg string) error {
	return fmt.Errorf("program command line option --%s %s (value: %s)", name, msg, value)
}

// namedOption finds --name or --name=value among the program's options,
// the last one given winning: given says whether it is there, v is nil
// when it has no value.
func (c *checker) namedOption(name string) (v *string, given bool) {
	for _, o := range c.opts.Config.Named {
		key, val, hasVal := strings.Cut(o, "=")
		if key != name {
			continue
		}
		given, v = true, nil
		if hasVal {
			v = &val
		}
	}
	return v, given
}

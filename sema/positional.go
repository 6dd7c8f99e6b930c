package sema

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/token"
)

// Positional parameters are known at compile time: each stands for a
// literal, an integer when its text reads as one (hex, octal and
// binary too, negative or up to 2^64-1) and a string otherwise. str($N)
// is always the text, and str($N + k) the text from its k-th byte, as
// bpftrace folds them.

// positional checks $N, which stands for its literal.
func (c *checker) positional(e *ast.Positional) *Type {
	s, _ := c.param(e.N)
	var lit ast.Expr = &ast.IntLit{At: e.At} // bpftrace's value of a missing one
	if s != "" {
		lit = paramLiteral(e.At, s)
	} else if !c.quiet {
		c.errs.Warn(e.Span(), "Positional parameter $%d is empty or not provided.", e.N)
	}
	c.prog.Stands[e] = lit
	t := c.expr(lit)
	if t.Kind == Int {
		// An integer parameter is 64 bits wide, as in bpftrace, whatever
		// its literal's size.
		return &Type{Kind: Int, Size: 8, Signed: t.Signed, Flex: t.Flex}
	}
	return t
}

// ParamInt is the value of positional parameter $n as an integer; ok is
// false when it is missing or no integer.
func (c Config) ParamInt(n int) (v int64, ok bool) {
	if n < 1 || n > len(c.Params) {
		return 0, false
	}
	switch lit := paramLiteral(ast.At{}, c.Params[n-1]).(type) {
	case *ast.IntLit:
		return int64(lit.Value), true
	case *ast.Unary:
		return -int64(lit.X.(*ast.IntLit).Value), true
	}
	return 0, false
}

// paramLiteral is the literal a parameter's text s reads as.
func paramLiteral(at ast.At, s string) ast.Expr {
	if neg, ok := strings.CutPrefix(s, "-"); ok {
		if n, err := strconv.ParseUint(neg, 0, 64); err == nil && n <= math.MaxInt64+1 {
			return &ast.Unary{At: at, Op: token.SUB, X: &ast.IntLit{At: at, Value: n}}
		}
	} else if n, err := strconv.ParseUint(s, 0, 64); err == nil {
		return &ast.IntLit{At: at, Value: n}
	}
	return &ast.StrLit{At: at, Value: s}
}

// strParam checks str($N), str($N, len) and str($N + k), which stand for
// the text of the parameter; ok is false for any other str() call.
func (c *checker) strParam(call *ast.Call) (*Type, bool) {
	arg, skip := call.Args[0], int64(0)
	if b, ok := arg.(*ast.Binary); ok && b.Op == token.ADD {
		n, isConst := c.constInt(b.Y)
		if !isConst || n < 0 {
			return nil, false
		}
		arg, skip = b.X, n
	}
	p, ok := arg.(*ast.Positional)
	if !ok || p.Count {
		return nil, false
	}
	s, _ := c.param(p.N)
	s = s[min(int(skip), len(s)):]
	if len(call.Args) == 2 {
		n, isConst := c.constInt(call.Args[1])
		if !isConst {
			return nil, false
		}
		if n >= 0 && int(n) < len(s) {
			s = s[:n]
		}
	}
	lit := &ast.StrLit{At: ast.At{Sp: call.Span()}, Value: s}
	c.prog.Stands[call] = lit
	return c.expr(lit), true
}

// stringLiteral is the string literal e is or, once checked, stands for.
func (c *checker) stringLiteral(e ast.Expr) (*ast.StrLit, bool) {
	if s, ok := c.prog.Stands[e].(*ast.StrLit); ok {
		return s, true
	}
	s, ok := e.(*ast.StrLit)
	return s, ok
}

// attachText puts the positional parameters into an attach point's
// text, outside quotes: `interval:s:$1`, `BEG$1` or a whole `$1`; and
// $container_pid.
func (c *checker) attachText(text string) (string, error) {
	if !strings.Contains(text, "$") {
		return text, nil
	}
	var b strings.Builder
	quoted := false
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if ch == '"' {
			quoted = !quoted
		}
		if ch != '$' || quoted {
			b.WriteByte(ch)
			continue
		}
		if n, err := c.attachContainerPid(&b, text[i+1:]); n > 0 || err != nil {
			if err != nil {
				return "", err
			}
			i += n
			continue
		}
		j := i + 1
		for j < len(text) && text[j] >= '0' && text[j] <= '9' && !(j == i+1 && text[j] == '0') {
			j++
		}
		if j == i+1 {
			if j == len(text) {
				return "", fmt.Errorf("invalid positional param: $ ends the attach point")
			}
			next := text[j : j+1]
			return "", fmt.Errorf("invalid trailing character for positional param: %s. Try quoting this entire part if this is intentional e.g. \"$%s\".", next, next)
		}
		n, err := strconv.Atoi(text[i+1 : j])
		if err != nil {
			return "", fmt.Errorf("positional parameter is not valid: %s", text[i:j])
		}
		s, _ := c.param(n)
		b.WriteString(s)
		i = j - 1
	}
	return b.String(), nil
}

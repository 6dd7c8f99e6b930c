package cpp

import (
	"strconv"
	"strings"

	"gtrace/lang/token"
)

// ifValue evaluates the condition of #if or #elif d. A broken condition
// is reported and counts as 0.
func (p *pp) ifValue(d directive) (v int64) {
	toks, ok := p.replaceDefined(d.toks)
	if !ok {
		return 0
	}
	exp := list{p: p}
	p.expand(&exp, toks, 0)
	toks = exp.toks
	if len(toks) == 0 {
		p.errorf(d.at, "#%s with no expression", d.name)
		return 0
	}
	e := &evaluator{p: p, toks: toks}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(badExpr); !ok {
				panic(r)
			}
			v = 0
		}
	}()
	v = e.cond(true)
	if e.i < len(toks) {
		e.fail("unexpected '%s' in #%s", toks[e.i].text, d.name)
	}
	return v
}

// replaceDefined replaces "defined X" and "defined(X)" by 1 or 0, before
// macros are expanded, so that X stays a name.
func (p *pp) replaceDefined(toks []tok) ([]tok, bool) {
	var out []tok
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tIdent || t.text != "defined" {
			out = append(out, t)
			continue
		}
		j := i + 1
		paren := j < len(toks) && toks[j].text == "("
		if paren {
			j++
		}
		if j >= len(toks) || toks[j].kind != tIdent || paren && (j+1 >= len(toks) || toks[j+1].text != ")") {
			p.errorf(t.span, "'defined' expects a macro name, as in defined(NAME)")
			return nil, false
		}
		v := "0"
		if p.macros[toks[j].text] != nil {
			v = "1"
		}
		if paren {
			j++
		}
		out = append(out, tok{kind: tNumber, text: v, span: token.Span{Start: t.span.Start, End: toks[j].span.End}, space: t.space})
		i = j
	}
	return out, true
}

// badExpr unwinds the evaluation of a broken #if expression.
type badExpr struct{}

// evaluator computes an #if expression in int64 arithmetic. Names that
// are left after expansion count as 0, as in C. When eval is false, as
// on the side of && or ?: that is not taken, it only parses.
type evaluator struct {
	p     *pp
	toks  []tok
	i     int
	depth int
}

func (e *evaluator) fail(format string, args ...any) {
	sp := e.toks[len(e.toks)-1].span
	if e.i < len(e.toks) {
		sp = e.toks[e.i].span
	}
	e.p.errorf(sp, format, args...)
	panic(badExpr{})
}

func (e *evaluator) peek() string {
	if e.i < len(e.toks) && e.toks[e.i].kind == tPunct {
		return e.toks[e.i].text
	}
	return ""
}

// enter counts one more level of nesting, and leave one less.
func (e *evaluator) enter() {
	if e.depth++; e.depth > maxExprDepth {
		e.fail("#if expression nested too deeply: more than %d levels", maxExprDepth)
	}
}

func (e *evaluator) leave() { e.depth-- }

// cond parses a ?: expression, the loosest that #if allows.
func (e *evaluator) cond(eval bool) int64 {
	e.enter()
	defer e.leave()
	c := e.binary(1, eval)
	if e.peek() != "?" {
		return c
	}
	e.i++
	a := e.cond(eval && c != 0)
	if e.peek() != ":" {
		e.fail("expected ':' in #if expression")
	}
	e.i++
	b := e.cond(eval && c == 0)
	if c != 0 {
		return a
	}
	return b
}

// precedence gives the binding of the binary operators, loosest first.
var precedence = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8,
	"+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

// binary parses the binary operators that bind at least as tightly as min.
func (e *evaluator) binary(min int, eval bool) int64 {
	x := e.unary(eval)
	for {
		op := e.peek()
		prec, ok := precedence[op]
		if !ok || prec < min {
			return x
		}
		opTok := e.toks[e.i]
		e.i++
		// The right side of && and || is evaluated only when it decides.
		rightEval := eval && !(op == "&&" && x == 0) && !(op == "||" && x != 0)
		y := e.binary(prec+1, rightEval)
		if eval {
			x = e.apply(op, opTok, x, y)
		}
	}
}

func (e *evaluator) apply(op string, at tok, x, y int64) int64 {
	b := func(c bool) int64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case "||":
		return b(x != 0 || y != 0)
	case "&&":
		return b(x != 0 && y != 0)
	case "|":
		return x | y
	case "^":
		return x ^ y
	case "&":
		return x & y
	case "==":
		return b(x == y)
	case "!=":
		return b(x != y)
	case "<":
		return b(x < y)
	case "<=":
		return b(x <= y)
	case ">":
		return b(x > y)
	case ">=":
		return b(x >= y)
	case "<<", ">>":
		if y < 0 || y > 63 {
			e.p.errorf(at.span, "shift count out of range in #if: %d", y)
			panic(badExpr{})
		}
		if op == "<<" {
			return x << y
		}
		return x >> y
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	}
	if y == 0 {
		e.p.errorf(at.span, "division by zero in #if")
		panic(badExpr{})
	}
	if op == "/" {
		return x / y
	}
	return x % y
}

func (e *evaluator) unary(eval bool) int64 {
	e.enter()
	defer e.leave()
	switch e.peek() {
	case "+":
		e.i++
		return e.unary(eval)
	case "-":
		e.i++
		return -e.unary(eval)
	case "~":
		e.i++
		return ^e.unary(eval)
	case "!":
		e.i++
		if e.unary(eval) == 0 {
			return 1
		}
		return 0
	case "(":
		e.i++
		v := e.cond(eval)
		if e.peek() != ")" {
			e.fail("expected ')' in #if expression")
		}
		e.i++
		return v
	}
	if e.i >= len(e.toks) {
		e.fail("#if expression ends early")
	}
	t := e.toks[e.i]
	switch t.kind {
	case tIdent:
		e.i++
		return 0
	case tNumber:
		v, ok := parseInt(t.text)
		if !ok {
			e.fail("invalid integer '%s' in #if", t.text)
		}
		e.i++
		return v
	case tString:
		if v, ok := parseChar(t.text); ok {
			e.i++
			return v
		}
	}
	e.fail("unexpected '%s' in #if", t.text)
	return 0
}

// parseInt reads a C integer constant: decimal, 0x hex or 0 octal, with
// an optional u, l, ul, ll or ull suffix in either case.
func parseInt(s string) (int64, bool) {
	s = strings.TrimRight(s, "uUlL")
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	v, err := strconv.ParseUint(s, base, 64)
	return int64(v), err == nil
}

// parseChar reads a character constant such as 'a' or '\n'.
func parseChar(s string) (int64, bool) {
	if len(s) < 3 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return 0, false
	}
	v, _, tail, err := strconv.UnquoteChar(s[1:len(s)-1], '\'')
	if err != nil || tail != "" {
		return 0, false
	}
	return int64(v), true
}

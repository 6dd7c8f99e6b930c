package cpp

import (
	"fmt"

	"gtrace/lang/token"
)

// expand appends toks to out with their macro invocations replaced by
// their expansions. depth counts the invocations being expanded around
// toks. A macro is not expanded again inside its own expansion: its name
// is left as it is, for good, as in C.
func (p *pp) expand(out *list, toks []tok, depth int) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		m := p.macros[t.text]
		if t.kind != tIdent || t.painted || m == nil {
			out.add(t)
			continue
		}
		if p.active[m.name] > 0 {
			t.painted = true
			out.add(t)
			continue
		}
		var args [][]tok
		at := t.span
		if m.fn {
			end := argsEnd(toks, i+1)
			if end < 0 {
				out.add(t) // not followed by '(': just a name
				continue
			}
			if end == len(toks) {
				p.errorf(t.span, "unterminated invocation of macro '%s'", m.name)
				out.add(toks[i:]...)
				return
			}
			args = splitArgs(toks[i+2 : end])
			at.End = toks[end].span.End
			i = end
		}
		n := len(out.toks)
		p.invoke(out, m, args, at, depth+1)
		if len(out.toks) > n {
			out.toks[n].space = t.space
		}
	}
}

// argsEnd returns the index of the ')' that closes the argument list
// starting at toks[i], len(toks) when it is not closed, or -1 when no '('
// is there.
func argsEnd(toks []tok, i int) int {
	if i >= len(toks) || toks[i].kind != tPunct || toks[i].text != "(" {
		return -1
	}
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(toks)
}

// splitArgs splits the tokens between the parentheses of an invocation at
// the commas that are not inside nested parentheses.
func splitArgs(toks []tok) [][]tok {
	args := [][]tok{nil}
	depth := 0
	for _, t := range toks {
		switch {
		case t.text == "(":
			depth++
		case t.text == ")":
			depth--
		case t.text == "," && depth == 0:
			args = append(args, nil)
			continue
		}
		args[len(args)-1] = append(args[len(args)-1], t)
	}
	return args
}

// invoke appends to out the expansion of macro m, called with args when
// it is function-like, at the invocation at, the depth-th one nested. The
// arguments are expanded first and put in place of the parameters; then
// the result is expanded again with m disabled.
func (p *pp) invoke(out *list, m *macro, args [][]tok, at token.Span, depth int) {
	if depth > maxDepth {
		p.fatalf(at, "macro expansion nested too deeply: more than %d levels", maxDepth)
	}
	if p.calls++; p.calls > maxExpansions {
		p.fatalf(at, "too many macro expansions: more than %d", maxExpansions)
	}
	// "F()" passes one empty argument, which stands for none when F has no
	// parameters.
	if m.fn && len(m.params) == 0 && len(args) == 1 && len(args[0]) == 0 {
		args = nil
	}
	if len(args) != len(m.params) {
		p.errorf(at, "macro '%s' takes %s, but %d were given", m.name, plural(len(m.params), "argument"), len(args))
		return
	}
	expanded := make([]list, len(args))
	for i, a := range args {
		expanded[i].p = p
		p.expand(&expanded[i], a, depth)
	}
	body := list{p: p}
	for _, t := range m.body {
		k := -1
		if t.kind == tIdent {
			k = index(m.params, t.text)
		}
		if k < 0 {
			body.add(t)
		} else if n := len(body.toks); len(expanded[k].toks) > 0 {
			body.add(expanded[k].toks...)
			body.toks[n].space = t.space
		}
	}
	for i := range body.toks {
		body.toks[i].span = at
	}
	p.active[m.name]++
	p.expand(out, body.toks, depth)
	p.active[m.name]--
}

// list is a token list that stops the run when it grows past maxOutput
// bytes, so that macros that double at each level stop early.
type list struct {
	p    *pp
	toks []tok
	size int
}

func (l *list) add(toks ...tok) {
	if len(toks) == 0 {
		return
	}
	for _, t := range toks {
		l.size += len(t.text) + 1
	}
	if l.size > maxOutput {
		l.p.fatalf(toks[0].span, "macro expansion too large: more than %d bytes", maxOutput)
	}
	l.toks = append(l.toks, toks...)
}

// plural spells n things, as in "1 argument" or "2 arguments".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

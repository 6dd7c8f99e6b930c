package ast

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gtrace/lang/token"
)

// Print writes prog back as source, as bpftrace v0.26 prints its tree for
// "-d ast": the top-level items in source order, two spaces of indentation,
// a probe's attach points one a line and its predicate on a line of its
// own, and parentheses around every operand that is not a primary
// expression (a literal, name, call, map, field or index). Lines are kept
// within 90 columns where they can be: argument lists, operator chains,
// ternaries, indexes and blocks break as bpftrace breaks them.
//
// src is the text prog was parsed from, or nil. bpftrace's tree holds what
// gtrace's does not, and Print takes it from src: integers as they were
// written (0x10, 1_000, 2us), the "#!" line, and whether a ';' follows the
// last expression of a block. Without a ';', bpftrace keeps that
// expression as the block's value (in the blocks of if, and nested
// blocks) and prints it without one; with src nil, integers print in
// decimal and every expression statement ends in ';'.
//
// Comments, blank lines and an empty `config = {}` are not in gtrace's
// tree and are not printed, where bpftrace prints them. Types are not printed:
// v0.26 prints them only in a debug mode that "-d ast" does not use.
//
// Like v0.26, Print spells `a->b` as `a.b`, and turns `x = x op y` back
// into `x op= y` for any binary operator, even where that changes the
// meaning (`$x = $x < 1` prints as `$x <= 1`, `let $x = $x + 1` as
// `let $x += 1`).
func Print(w io.Writer, prog *Program, src []byte) {
	p := &printer{src: src}
	out := p.program(prog)
	var b bytes.Buffer
	for _, l := range out.lines[:out.numLines()] {
		b.WriteString(strings.TrimRight(strings.Join(l, ""), " \t\r\n"))
		b.WriteByte('\n')
	}
	w.Write(b.Bytes())
}

// maxWidth is the line width the printer aims for, and indent the
// indentation of a nested block, both as in bpftrace.
const (
	maxWidth = 90
	indent   = 2
)

// A layout is printed text as lines of segments, built up by appending
// text, line breaks and other layouts. Widths are unsigned and wrap as
// bpftrace's do, so that a deeply nested expression whose width budget runs
// out is laid out as bpftrace lays it out.
type layout struct {
	lines [][]string
}

func newLayout() *layout { return &layout{lines: [][]string{nil}} }

func textLayout(s string) *layout { return newLayout().text(s) }

// text appends s to the last line.
func (l *layout) text(s string) *layout {
	last := len(l.lines) - 1
	l.lines[last] = append(l.lines[last], s)
	return l
}

// lineBreak starts a new line.
func (l *layout) lineBreak() *layout {
	l.lines = append(l.lines, nil)
	return l
}

// add appends o. With ind 0, o's first line continues the last line and
// its other lines start at the column where it began. With ind > 0, o
// starts on a line of its own, every line of it indented by ind, and a new
// line follows it.
func (l *layout) add(o *layout, ind uint) *layout {
	if o.numLines() == 0 {
		return l
	}
	col := columns(l.lines[len(l.lines)-1])
	if ind > 0 {
		l.lines = append(l.lines, nil)
		col = ind
	}
	for i, line := range o.lines {
		last := len(l.lines) - 1
		if col != 0 && len(l.lines[last]) == 0 {
			l.lines[last] = append(l.lines[last], strings.Repeat(" ", int(col)))
		}
		l.lines[last] = append(l.lines[last], line...)
		if ind > 0 || i < len(o.lines)-1 {
			l.lines = append(l.lines, nil)
		}
	}
	return l
}

// numLines counts the lines, leaving out a last line that is still empty.
func (l *layout) numLines() int {
	if len(l.lines[len(l.lines)-1]) == 0 {
		return len(l.lines) - 1
	}
	return len(l.lines)
}

// width is the widest line's width in bytes.
func (l *layout) width() uint {
	w := uint(0)
	for _, line := range l.lines {
		w = max(w, columns(line))
	}
	return w
}

func columns(line []string) uint {
	n := 0
	for _, s := range line {
		n += len(s)
	}
	return uint(n)
}

type printer struct {
	src []byte
}

// topLevel is a top-level item with where it starts in the source.
type topLevel struct {
	pos  token.Pos
	node any // *CDecl, []*ConfigEntry, *Probe or *MapDecl
}

func (p *printer) program(prog *Program) *layout {
	out := newLayout()
	if bytes.HasPrefix(p.src, []byte("#!")) {
		header, _, _ := bytes.Cut(p.src, []byte("\n"))
		out.text(string(header)).lineBreak()
	}
	var items []topLevel
	for _, d := range prog.Preamble {
		items = append(items, topLevel{d.Sp.Start, d})
	}
	if len(prog.Config) > 0 {
		items = append(items, topLevel{prog.Config[0].Sp.Start, prog.Config})
	}
	for _, pr := range prog.Probes {
		items = append(items, topLevel{pr.Sp.Start, pr})
	}
	for _, d := range prog.MapDecls {
		items = append(items, topLevel{d.Sp.Start, d})
	}
	// bpftrace prints in source order; nodes made without a place in the
	// source keep the order of the tree.
	sorted := true
	for _, it := range items {
		sorted = sorted && it.pos >= 0
	}
	if sorted {
		sort.SliceStable(items, func(i, j int) bool { return items[i].pos < items[j].pos })
	}
	for _, it := range items {
		var l *layout
		switch n := it.node.(type) {
		case *CDecl:
			l = textLayout(cText(n.Text))
		case []*ConfigEntry:
			l = p.config(n)
		case *Probe:
			l = p.probe(n, maxWidth)
		case *MapDecl:
			l = textLayout(fmt.Sprintf("let %s = %s(%d);", n.Map.Name, n.Kind, n.MaxEntries))
		}
		out.add(l.lineBreak(), 0)
	}
	return out
}

// cText is a preprocessor line, or a struct, union or enum definition
// ending in one ';', as bpftrace keeps them.
func cText(s string) string {
	s = strings.TrimRight(s, " \t\r\n\v\f")
	if strings.HasPrefix(s, "#") {
		return s
	}
	s = strings.TrimRight(strings.TrimSuffix(s, ";"), " \t\r\n\v\f")
	return s + ";"
}

func (p *printer) config(entries []*ConfigEntry) *layout {
	body := newLayout()
	for _, e := range entries {
		if body.numLines() > 0 {
			body.lineBreak()
		}
		body.add(textLayout(e.Key+" = ").add(p.configValue(e.Value), 0).text(";"), 0)
	}
	return textLayout("config = {").add(body, indent).text("}")
}

// configValue prints a config value as bpftrace keeps it: a number in
// decimal, a string bare unless it needs escapes.
func (p *printer) configValue(x Expr) *layout {
	switch x := x.(type) {
	case *IntLit:
		return textLayout(strconv.FormatUint(x.Value, 10))
	case *BoolLit:
		return textLayout(strconv.FormatBool(x.Value))
	case *Ident:
		return textLayout(x.Name)
	case *StrLit:
		if e := escape(x.Value); e != x.Value {
			return textLayout(`"` + e + `"`)
		}
		return textLayout(x.Value)
	}
	return p.expr(x, maxWidth, true)
}

func (p *printer) probe(pr *Probe, w uint) *layout {
	out := newLayout()
	for i, a := range pr.Attach {
		t := a.Text
		if i < len(pr.Attach)-1 {
			t += ","
		}
		out.add(textLayout(t), 0).lineBreak()
	}
	if pr.Pred != nil {
		out.text("/").add(p.expr(pr.Pred, w, true), 0).text("/").lineBreak()
	}
	return out.text("{").add(p.block(pr.Body, w-2, noValue), indent).text("}")
}

// blockMode says whether a block's last expression statement, when no ';'
// follows it in the source, is the block's value. bpftrace keeps such a
// value in the blocks of if and in nested blocks, and prints it without
// ';'; a probe or loop body turns it back into a statement, and with it
// every value in the if and block statements it holds (normalized).
type blockMode int

const (
	withValue blockMode = iota
	noValue
	normalized
)

// block prints the statements of b, one a line, without braces.
func (p *printer) block(b *Block, w uint, mode blockMode) *layout {
	out := newLayout()
	if b == nil {
		return out
	}
	for i, s := range b.Stmts {
		trailing := i == len(b.Stmts)-1 && p.unterminated(s)
		inner := mode
		if mode != normalized {
			inner = withValue
			if trailing && mode == noValue {
				inner = normalized
			}
		}
		l := p.stmt(s, w, inner, trailing && mode == withValue)
		if l.width() > 0 && i > 0 {
			out.lineBreak()
		}
		out.add(l, 0)
	}
	return out
}

// hasValue reports whether b, printed in mode, ends in a value.
func (p *printer) hasValue(b *Block, mode blockMode) bool {
	return mode == withValue && len(b.Stmts) > 0 && p.unterminated(b.Stmts[len(b.Stmts)-1])
}

// unterminated reports whether s is an expression statement (an
// expression, an if or a block) that no ';' follows in the source.
func (p *printer) unterminated(s Stmt) bool {
	switch s.(type) {
	case *ExprStmt, *IfStmt, *Block:
	default:
		return false
	}
	i := int(s.Span().End)
	if p.src == nil || i < 0 || i > len(p.src) {
		return false
	}
	for i < len(p.src) {
		switch {
		case strings.IndexByte(" \t\r\n\v\f", p.src[i]) >= 0:
			i++
		case bytes.HasPrefix(p.src[i:], []byte("//")):
			for i < len(p.src) && p.src[i] != '\n' {
				i++
			}
		case bytes.HasPrefix(p.src[i:], []byte("/*")):
			end := bytes.Index(p.src[i+2:], []byte("*/"))
			if end < 0 {
				return false
			}
			i += end + 4
		default:
			return p.src[i] == '}'
		}
	}
	return false
}

// stmt prints s. mode is that of the blocks of an if or block statement;
// value says that s is its block's value.
func (p *printer) stmt(s Stmt, w uint, mode blockMode, value bool) *layout {
	switch s := s.(type) {
	case *ExprStmt:
		if s.Discard {
			return textLayout("_ = ").add(p.expr(s.X, w-4, true), 0).text(";")
		}
		// A ternary is an if to bpftrace, so it gets no ';' either.
		if _, ternary := s.X.(*Ternary); value || ternary {
			return p.expr(s.X, w, true)
		}
		return p.expr(s.X, w, true).text(";")
	case *AssignStmt:
		var lhs *layout
		if m, ok := s.LHS.(*Map); ok && len(m.Keys) > 0 {
			lhs = p.mapAccess(m, w)
		} else {
			lhs = p.expr(s.LHS, w, true)
		}
		return p.assign(lhs, s.LHS, s.Op, s.RHS, w)
	case *LetStmt:
		decl := textLayout("let ").add(textLayout(s.Var.Name), 0)
		if s.Type != nil {
			decl.text(" : ").add(textLayout(p.typeText(s.Type)), 0)
		}
		if s.Value == nil {
			return decl.text(";")
		}
		return p.assign(decl, s.Var, token.ASSIGN, s.Value, w)
	case *IfStmt:
		return p.ifStmt(s, w, mode)
	case *WhileStmt:
		cond := p.expr(s.Cond, w-8, false)
		body := p.block(s.Body, w-2, noValue)
		return textLayout("while ").add(cond, 0).text(" {").add(body, indent).text("}")
	case *UnrollStmt:
		body := p.block(s.Body, w-2, noValue)
		return textLayout("unroll (").add(p.expr(s.Count, w-11, false), 0).text(") {").add(body, indent).text("}")
	case *ForStmt:
		out := textLayout("for ").add(textLayout(s.Var.Name), 0).text(" : ")
		if s.Map != nil {
			out.add(textLayout(s.Map.Name), 0)
		} else {
			out.add(p.rangeEnd(s.Start, w), 0).text("..").add(p.rangeEnd(s.End, w), 0)
		}
		return out.text(" {").add(p.block(s.Body, w-2, noValue), indent).text("}")
	case *JumpStmt:
		switch s.Tok {
		case token.BREAK:
			return textLayout("break;")
		case token.CONTINUE:
			return textLayout("continue;")
		}
		if s.Value != nil {
			return textLayout("return ").add(p.expr(s.Value, w-7, true), 0).text(";")
		}
		return textLayout("return;")
	case *Block:
		// A nested block is an expression statement in bpftrace: on one
		// line when it fits, with no ';' after it.
		body := p.block(s, w-2, mode)
		if body.numLines() > 1 || body.width() > w {
			return textLayout("{").add(body, indent).text("}")
		}
		return textLayout("{ ").add(body, 0).text(" }")
	}
	panic(fmt.Sprintf("ast.Print: unexpected statement %T", s))
}

// assign prints `lhs op rhs;`. A plain assignment whose value is a binary
// operation on its own target prints as a compound one, as in bpftrace.
func (p *printer) assign(lhs *layout, target Expr, op token.Kind, rhs Expr, w uint) *layout {
	ops := "="
	if bin, ok := op.AssignOp(); ok {
		ops = binaryOp(bin) + "="
	} else if b, ok := rhs.(*Binary); ok && sameTarget(target, b.X) {
		ops = binaryOp(b.Op) + "="
		rhs = b.Y
	}
	val := p.expr(rhs, w-(lhs.width()+2+uint(len(ops))), true)
	return newLayout().add(lhs, 0).text(" "+ops+" ").add(val, 0).text(";")
}

// sameTarget reports whether x is the assignment target t: the same
// variable, scalar map, or map with equal keys.
func sameTarget(t, x Expr) bool {
	switch t := t.(type) {
	case *Var:
		v, ok := x.(*Var)
		return ok && v.Name == t.Name
	case *Map:
		m, ok := x.(*Map)
		if !ok || m.Name != t.Name || (len(m.Keys) == 0) != (len(t.Keys) == 0) {
			return false
		}
		return len(t.Keys) == 0 || equal(mapKey(t), mapKey(m))
	}
	return false
}

// mapKey is the key of a map access as bpftrace holds it: several keys
// make one tuple.
func mapKey(m *Map) Expr {
	if len(m.Keys) == 1 {
		return m.Keys[0]
	}
	return &Tuple{Elems: m.Keys}
}

// ifStmt prints an if, its else ifs and its else over several lines, or on
// one when its first block is a value that fits there and it has an else
// and no else if.
func (p *printer) ifStmt(s *IfStmt, w uint, mode blockMode) *layout {
	var conds, bodies []*layout
	var final *layout
	total := uint(0)
	multiline := false
	for it := s; it != nil; {
		cond := p.expr(it.Cond, w-5, false)
		body := p.block(it.Then, w-2, mode)
		total += cond.width() + 5 + body.width() + 3
		multiline = multiline || cond.numLines() > 1 || body.numLines() > 1
		conds, bodies = append(conds, cond), append(bodies, body)
		next, _ := it.Else.(*IfStmt)
		if e, ok := it.Else.(*Block); ok {
			final = p.block(e, w-2, mode)
		}
		it = next
	}
	out := newLayout()
	if !p.hasValue(s.Then, mode) || s.Else == nil || total > w || len(conds) > 1 || multiline {
		for i := range conds {
			if i > 0 {
				out.text(" else if ")
			} else {
				out.text("if ")
			}
			out.add(conds[i], 0).text(" {").add(bodies[i], indent).text("}")
		}
		if final != nil {
			out.text(" else {").add(final, indent).text("}")
		}
		return out
	}
	out.text("if ").add(conds[0], 0).text(" { ").add(bodies[0], 0).text(" }")
	if final != nil {
		out.text(" else { ").add(final, 0).text(" }")
	}
	return out
}

func (p *printer) rangeEnd(x Expr, w uint) *layout {
	if isLiteral(x) {
		return p.expr(x, w, true)
	}
	return textLayout("(").add(p.expr(x, w-4, true), 0).text(")")
}

func isLiteral(x Expr) bool {
	switch x := x.(type) {
	case *IntLit, *StrLit, *BoolLit:
		return true
	case *Tuple:
		for _, e := range x.Elems {
			if !isLiteral(e) {
				return false
			}
		}
		return true
	}
	return false
}

// isPrimary reports whether x prints without parentheses wherever it is.
func isPrimary(x Expr) bool {
	switch x.(type) {
	case *IntLit, *StrLit, *BoolLit, *Ident, *Positional, *Var, *Map,
		*Call, *Field, *Index, *Sizeof, *Offsetof, *BlockExpr:
		return true
	}
	return false
}

func isComparison(x Expr) bool {
	b, ok := x.(*Binary)
	if !ok {
		return false
	}
	switch b.Op {
	case token.EQ, token.NE, token.LT, token.LE, token.GT, token.GE:
		return true
	}
	return false
}

// expr prints x in parentheses unless it is bare (its place needs none) or
// a primary expression. A tuple is always in parentheses.
func (p *printer) expr(x Expr, w uint, bare bool) *layout {
	_, tuple := x.(*Tuple)
	bareOK := bare && !tuple || isPrimary(x)
	if bareOK {
		return newLayout().add(p.value(x, w), 0)
	}
	return textLayout("(").add(p.value(x, w-2), 0).text(")")
}

// value prints x itself, without parentheses around it.
func (p *printer) value(x Expr, w uint) *layout {
	switch x := x.(type) {
	case *IntLit:
		return textLayout(p.intText(x))
	case *StrLit:
		return textLayout(`"` + escape(x.Value) + `"`)
	case *BoolLit:
		return textLayout(strconv.FormatBool(x.Value))
	case *Ident:
		return textLayout(x.Name)
	case *Positional:
		if x.Count {
			return textLayout("$#")
		}
		return textLayout("$" + strconv.Itoa(x.N))
	case *Var:
		return textLayout(x.Name)
	case *Map:
		if len(x.Keys) == 0 {
			return textLayout(x.Name)
		}
		return p.mapAccess(x, w)
	case *Call:
		args := p.list(x.Args, ", ", w-uint(len(x.Name)+2), true)
		if args.width() > w {
			return textLayout(x.Name+"(").add(args, indent).text(")")
		}
		return textLayout(x.Name+"(").add(args, 0).text(")")
	case *Binary:
		// A chain of the same logical operator prints as one list.
		var operands []Expr
		var flatten func(e Expr)
		flatten = func(e Expr) {
			if b, ok := e.(*Binary); ok && b.Op == x.Op && (x.Op == token.LAND || x.Op == token.LOR) {
				flatten(b.X)
				flatten(b.Y)
				return
			}
			operands = append(operands, e)
		}
		flatten(x.X)
		flatten(x.Y)
		return p.list(operands, " "+binaryOp(x.Op)+" ", w, false)
	case *Unary:
		op := unaryOp(x.Op)
		return textLayout(op).add(p.expr(x.X, w-uint(len(op)), false), 0)
	case *IncDec:
		op := "++"
		if x.Op == token.DEC {
			op = "--"
		}
		operand := p.expr(x.X, w-2, false)
		if x.Post {
			return newLayout().add(operand, 0).text(op)
		}
		return textLayout(op).add(operand, 0)
	case *Ternary:
		cond := p.expr(x.Cond, w, false)
		if x.Then == nil {
			els := p.expr(x.Else, w-4, false)
			return newLayout().add(cond, 0).text(" ?: ").add(els, 0)
		}
		then := p.expr(x.Then, w-2, false)
		els := p.expr(x.Else, w-2, false)
		if cond.width()+then.width()+els.width()+8 > w {
			return newLayout().add(cond, 0).lineBreak().text("? ").add(then, 0).lineBreak().text(": ").add(els, 0)
		}
		return newLayout().add(cond, 0).text(" ? ").add(then, 0).text(" : ").add(els, 0)
	case *Field:
		if n, ok := tupleIndex(x); ok {
			return newLayout().add(p.expr(x.X, w-uint(len(n)+1), false), 0).text("." + n)
		}
		return p.expr(x.X, w-uint(len(x.Name)+1), isPrimary(x.X)).text("." + x.Name)
	case *Index:
		base := p.expr(x.X, w-1, false)
		idx := p.expr(x.I, w-2, false)
		if base.width()+idx.width()+2 > w {
			return newLayout().add(base, 0).text("[").add(idx, indent).text("]")
		}
		return newLayout().add(base, 0).text("[").add(idx, 0).text("]")
	case *Tuple:
		if x.Names != nil {
			return p.record(x, w)
		}
		if len(x.Elems) == 1 {
			return p.expr(x.Elems[0], w-3, false).text(",")
		}
		return p.list(x.Elems, ",", w-indent-1, false)
	case *Cast:
		typ := textLayout("(").add(textLayout(p.typeText(x.Type)), 0).text(")")
		operand := p.expr(x.X, w-typ.width(), isPrimary(x.X))
		return newLayout().add(typ, 0).add(operand, 0)
	case *Sizeof:
		var arg *layout
		if x.Type != nil {
			arg = textLayout(p.typeText(x.Type))
		} else {
			arg = p.expr(x.X, w-8, true)
		}
		return textLayout("sizeof(").add(arg, 0).text(")")
	case *TypeExpr:
		return textLayout(p.typeText(x))
	case *Offsetof:
		var arg *layout
		if x.Type != nil {
			arg = textLayout(p.typeText(x.Type))
		} else {
			arg = p.expr(x.X, w, false)
		}
		return textLayout("offsetof(").add(arg, 0).text(", ").add(textLayout(strings.Join(x.Field, ".")), 0).text(")")
	case *BlockExpr:
		return p.blockExpr(x, w)
	}
	panic(fmt.Sprintf("ast.Print: unexpected expression %T", x))
}

func (p *printer) mapAccess(m *Map, w uint) *layout {
	var key *layout
	if len(m.Keys) == 1 {
		if t, ok := m.Keys[0].(*Tuple); ok && len(t.Elems) >= 2 && t.Names == nil {
			key = p.value(t, w-indent)
		} else {
			key = p.expr(m.Keys[0], w-indent, true)
		}
	} else {
		key = p.value(&Tuple{Elems: m.Keys}, w-indent)
	}
	if uint(len(m.Name))+key.width()+2 > w {
		return textLayout(m.Name+"[").add(key, indent).text("]")
	}
	return textLayout(m.Name+"[").add(key, 0).text("]")
}

// list prints xs separated by sep: on one line if it fits in w, otherwise
// broken into lines as bpftrace breaks them.
func (p *printer) list(xs []Expr, sep string, w uint, bare bool) *layout {
	items := make([]*layout, len(xs))
	total := uint(0)
	for i, x := range xs {
		iw := w
		if i < len(xs)-1 {
			iw = w - 1
		}
		items[i] = p.expr(x, iw, bare || isComparison(x))
		if i < len(xs)-1 {
			items[i].text(sep)
		}
		total += items[i].width()
	}
	out := newLayout()
	if total < w || len(xs) == 0 {
		for _, it := range items {
			out.add(it, 0)
		}
		return out
	}
	breaks := lineBreaks(items, w)
	for i, it := range items {
		if i > 0 && breaks[i] {
			out.lineBreak()
		}
		out.add(it, 0)
	}
	return out
}

// lineBreaks chooses before which items of a list to break the line.
// bpftrace tries every way of breaking it in a fixed order (the breaks read
// as the bits of a number, item i+1 at bit i, counting up) and keeps the
// first whose lines all fit; when none does, it breaks nowhere. That first
// one is the smallest such number, found here a bit at a time from the
// highest: a bit stays clear if the lines can still fit with every lower
// bit set.
func lineBreaks(items []*layout, w uint) []bool {
	n := len(items)
	widths := make([]uint, n)
	for i, it := range items {
		widths[i] = it.width()
	}
	breaks := make([]bool, n)
	for _, wd := range widths {
		if wd > w {
			return breaks
		}
	}
	fits := func(b []bool) bool {
		line := widths[0]
		for i := 1; i < n; i++ {
			if b[i] {
				if line > w {
					return false
				}
				line = widths[i]
			} else {
				line += widths[i]
			}
		}
		return line <= w
	}
	trial := make([]bool, n)
	for i := n - 1; i >= 1; i-- {
		copy(trial, breaks)
		for j := 1; j < i; j++ {
			trial[j] = true
		}
		if !fits(trial) {
			breaks[i] = true
		}
	}
	return breaks
}

// intText is an integer as written in the source, or in decimal.
func (p *printer) intText(x *IntLit) string {
	s, e := int(x.Sp.Start), int(x.Sp.End)
	if p.src != nil && 0 <= s && s < e && e <= len(p.src) && p.src[s] >= '0' && p.src[s] <= '9' {
		return string(p.src[s:e])
	}
	return strconv.FormatUint(x.Value, 10)
}

// tupleIndex returns the index of a tuple element access such as $t.0, in
// decimal.
func tupleIndex(f *Field) (string, bool) {
	if f.Arrow || f.Name == "" || strings.Trim(f.Name, "0123456789") != "" {
		return "", false
	}
	n, err := strconv.ParseUint(f.Name, 10, 64)
	if err != nil {
		return f.Name, true
	}
	return strconv.FormatUint(n, 10), true
}

// typeText spells t as bpftrace's printer does: "uint8", "struct task*",
// "int8[4]".
func (p *printer) typeText(t *TypeExpr) string {
	s := t.Name
	switch {
	case t.OfType != nil:
		s = "typeof(" + p.typeText(t.OfType) + ")"
	case t.Of != nil:
		var lines []string
		for _, l := range p.expr(t.Of, maxWidth, true).lines {
			lines = append(lines, strings.Join(l, ""))
		}
		s = "typeof(" + strings.Join(lines, " ") + ")"
	}
	s += strings.Repeat("*", t.Ptr)
	if t.Len > 0 {
		s += "[" + strconv.Itoa(t.Len) + "]"
	}
	if t.Unsized {
		s += "[]"
	}
	return s
}

func binaryOp(k token.Kind) string {
	switch k {
	case token.EQ:
		return "=="
	case token.NE:
		return "!="
	case token.LE:
		return "<="
	case token.GE:
		return ">="
	case token.LT:
		return "<"
	case token.GT:
		return ">"
	case token.LAND:
		return "&&"
	case token.LOR:
		return "||"
	case token.SHL:
		return "<<"
	case token.SHR:
		return ">>"
	case token.ADD:
		return "+"
	case token.SUB:
		return "-"
	case token.MUL:
		return "*"
	case token.DIV:
		return "/"
	case token.MOD:
		return "%"
	case token.AND:
		return "&"
	case token.OR:
		return "|"
	case token.XOR:
		return "^"
	}
	return k.String()
}

func unaryOp(k token.Kind) string {
	switch k {
	case token.NOT:
		return "!"
	case token.BNOT:
		return "~"
	case token.SUB:
		return "-"
	case token.MUL:
		return "*"
	case token.AND:
		return "&"
	}
	return k.String()
}

// equal reports whether a and b are the same expression, as bpftrace
// compares nodes: by value, not by spelling or place.
func equal(a, b Expr) bool {
	switch a := a.(type) {
	case *IntLit:
		b, ok := b.(*IntLit)
		return ok && a.Value == b.Value
	case *StrLit:
		b, ok := b.(*StrLit)
		return ok && a.Value == b.Value
	case *BoolLit:
		b, ok := b.(*BoolLit)
		return ok && a.Value == b.Value
	case *Ident:
		b, ok := b.(*Ident)
		return ok && a.Name == b.Name
	case *Positional:
		b, ok := b.(*Positional)
		return ok && a.N == b.N && a.Count == b.Count
	case *Var:
		b, ok := b.(*Var)
		return ok && a.Name == b.Name
	case *Map:
		b, ok := b.(*Map)
		if !ok || a.Name != b.Name || (len(a.Keys) == 0) != (len(b.Keys) == 0) {
			return false
		}
		return len(a.Keys) == 0 || equal(mapKey(a), mapKey(b))
	case *Call:
		b, ok := b.(*Call)
		return ok && a.Name == b.Name && equalList(a.Args, b.Args)
	case *Binary:
		b, ok := b.(*Binary)
		return ok && a.Op == b.Op && equal(a.X, b.X) && equal(a.Y, b.Y)
	case *Unary:
		b, ok := b.(*Unary)
		return ok && a.Op == b.Op && equal(a.X, b.X)
	case *IncDec:
		b, ok := b.(*IncDec)
		return ok && a.Op == b.Op && a.Post == b.Post && equal(a.X, b.X)
	case *Ternary:
		b, ok := b.(*Ternary)
		return ok && equal(a.Cond, b.Cond) && equalOpt(a.Then, b.Then) && equal(a.Else, b.Else)
	case *Field:
		b, ok := b.(*Field)
		if !ok {
			return false
		}
		an, aTuple := tupleIndex(a)
		bn, bTuple := tupleIndex(b)
		if aTuple || bTuple {
			return aTuple && bTuple && an == bn && equal(a.X, b.X)
		}
		return a.Name == b.Name && equal(a.X, b.X)
	case *Index:
		b, ok := b.(*Index)
		return ok && equal(a.X, b.X) && equal(a.I, b.I)
	case *Tuple:
		b, ok := b.(*Tuple)
		return ok && equalList(a.Elems, b.Elems) && slices.Equal(a.Names, b.Names)
	case *Cast:
		b, ok := b.(*Cast)
		return ok && equalType(a.Type, b.Type) && equal(a.X, b.X)
	case *Sizeof:
		b, ok := b.(*Sizeof)
		return ok && equalType(a.Type, b.Type) && equalOpt(a.X, b.X)
	case *Offsetof:
		b, ok := b.(*Offsetof)
		return ok && equalType(a.Type, b.Type) && equalOpt(a.X, b.X) &&
			strings.Join(a.Field, ".") == strings.Join(b.Field, ".")
	case *TypeExpr:
		b, ok := b.(*TypeExpr)
		return ok && equalType(a, b)
	}
	return false
}

func equalList(a, b []Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalOpt(a, b Expr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return equal(a, b)
}

func equalType(a, b *TypeExpr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Name == b.Name && a.Ptr == b.Ptr && a.Len == b.Len && a.Unsized == b.Unsized &&
		equalOpt(a.Of, b.Of) && equalType(a.OfType, b.OfType)
}

// escape quotes the unprintable bytes of s, and '\' and '"', as bpftrace's
// printer does.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '"':
			b.WriteString(`\"`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	return b.String()
}

// record prints the fields of (x = a, y = b) on one line; the
// parentheses come around it as around a tuple's list.
func (p *printer) record(x *Tuple, w uint) *layout {
	out := newLayout()
	for i, e := range x.Elems {
		if i > 0 {
			out.text(", ")
		}
		out.text(x.Names[i]+" = ").add(p.expr(e, w, true), 0)
	}
	return out
}

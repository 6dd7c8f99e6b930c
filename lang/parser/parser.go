package parser

import (
	"strconv"
	"strings"

	"gtrace/lang/ast"
	"gtrace/lang/builtin"
	"gtrace/lang/diag"
	"gtrace/lang/scanner"
	"gtrace/lang/token"
)

const (
	// maxErrors is how many errors ParseFile reports before it gives up.
	maxErrors = 10
	// maxDepth bounds the nesting of expressions and blocks, so that hostile
	// input cannot exhaust the stack.
	maxDepth = 200
)

// ParseFile parses the whole of f. It always returns a program, which is
// incomplete when the list holds errors.
func ParseFile(f *token.File) (prog *ast.Program, errs diag.List) {
	p := &parser{file: f}
	p.sc.Init(f, &p.errs)
	prog = &ast.Program{At: ast.At{Sp: token.Span{Start: 0, End: token.Pos(len(f.Src))}}}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
		p.errs.Sort()
		if len(p.errs) > maxErrors {
			p.errs = p.errs[:maxErrors]
		}
		errs = p.errs
	}()
	p.next()
	p.parseProgram(prog)
	return prog, p.errs
}

// bailout unwinds the whole parse: too many errors, or too deep.
type bailout struct{}

// syntaxError unwinds to the enclosing statement or top-level item, which
// skips ahead to a place where parsing can resume.
type syntaxError struct{}

type parser struct {
	file  *token.File
	sc    scanner.Scanner
	errs  diag.List
	depth int

	// The current token.
	tok  token.Kind
	lit  string
	span token.Span

	prevEnd token.Pos // end of the previous token
	inPred  bool      // a "/" followed by "{" ends the predicate
	spec    bool      // guessing: errors only unwind, see attempt
}

// state is what save and restore need to back up after a guess.
type state struct {
	sc      scanner.Scanner
	tok     token.Kind
	lit     string
	span    token.Span
	prevEnd token.Pos
	nerrs   int
	spec    bool
}

func (p *parser) save() state {
	return state{p.sc, p.tok, p.lit, p.span, p.prevEnd, len(p.errs), p.spec}
}

func (p *parser) restore(s state) {
	p.sc, p.tok, p.lit, p.span, p.prevEnd = s.sc, s.tok, s.lit, s.span, s.prevEnd
	p.errs = p.errs[:s.nerrs]
}

// next moves to the next token. It drops ILLEGAL tokens, which the scanner
// has reported, as bpftrace's lexer did.
func (p *parser) next() {
	p.prevEnd = p.span.End
	p.tok, p.lit, p.span = p.sc.Scan()
	for p.tok == token.ILLEGAL {
		p.tok, p.lit, p.span = p.sc.Scan()
	}
	if len(p.errs) >= maxErrors && !p.spec {
		panic(bailout{})
	}
}

// peek returns the kind of the token after the current one.
func (p *parser) peek() token.Kind {
	s := p.save()
	p.spec = true
	p.next()
	k := p.tok
	p.restore(s)
	p.spec = s.spec
	return k
}

// attempt runs f as a guess. It reports whether f returned true without a
// syntax error; if not, the parser is back where it was. While guessing,
// an error only unwinds: the guess is wrong, not the program.
func (p *parser) attempt(f func() bool) bool {
	s := p.save()
	p.spec = true
	ok := false
	p.recovering(func() { ok = f() }, func() {})
	p.spec = s.spec
	if !ok {
		p.restore(s)
	}
	return ok
}

func (p *parser) errorAt(sp token.Span, format string, args ...any) {
	if p.spec {
		panic(syntaxError{})
	}
	// One error per place: recovery often trips over the same token twice.
	for _, e := range p.errs {
		if e.Span.Start == sp.Start {
			return
		}
	}
	p.errs.Add(sp, format, args...)
	if len(p.errs) >= maxErrors {
		panic(bailout{})
	}
}

// unexpected reports the current token as bison did and unwinds.
// expecting lists what would have been accepted, when that is short.
func (p *parser) unexpected(expecting ...string) {
	msg := "syntax error, unexpected " + describe(p.tok)
	if len(expecting) > 0 {
		msg += ", expecting " + strings.Join(expecting, " or ")
	}
	p.errorAt(p.span, "%s", msg)
	panic(syntaxError{})
}

// describe names a token kind in bison's words.
func describe(k token.Kind) string {
	switch k {
	case token.EOF:
		return "end of file"
	case token.COMMA:
		return `","`
	}
	return k.String()
}

func (p *parser) expect(k token.Kind, expecting ...string) token.Span {
	if p.tok != k {
		if len(expecting) == 0 {
			expecting = []string{describe(k)}
		}
		p.unexpected(expecting...)
	}
	sp := p.span
	p.next()
	return sp
}

func (p *parser) got(k token.Kind) bool {
	if p.tok == k {
		p.next()
		return true
	}
	return false
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.errorAt(p.span, "nesting too deep: more than %d levels", maxDepth)
		panic(bailout{})
	}
}

func (p *parser) leave() { p.depth-- }

// from returns the span from start to the end of the last token.
func (p *parser) from(start token.Pos) ast.At {
	return ast.At{Sp: token.Span{Start: start, End: p.prevEnd}}
}

// recovering runs parse, and on a syntax error skips with sync.
func (p *parser) recovering(parse func(), sync func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(syntaxError); !ok {
				panic(r)
			}
			sync()
		}
	}()
	parse()
}

// ---------------------------------------------------------------------------
// Top level

func (p *parser) parseProgram(prog *ast.Program) {
	for p.tok != token.EOF {
		start := p.span.Start
		p.recovering(func() { p.parseTopLevel(prog) }, func() {
			if p.span.Start == start {
				p.next()
			}
			for p.tok != token.EOF && p.tok != token.PROBE && p.tok != token.CPREPROC && p.tok != token.MACRO {
				p.next()
			}
		})
	}
}

func (p *parser) parseTopLevel(prog *ast.Program) {
	switch p.tok {
	case token.CPREPROC, token.STRUCT, token.UNION, token.ENUM:
		d := p.parseCDecl()
		if len(prog.Probes) > 0 || len(prog.Macros) > 0 {
			p.errorAt(d.Sp, "C definitions must appear before probes")
		}
		prog.Preamble = append(prog.Preamble, d)
	case token.CONFIG:
		start := p.span
		entries := p.parseConfig()
		switch {
		case len(prog.Probes) > 0 || len(prog.Macros) > 0:
			p.errorAt(start, "config must appear before probes")
		case prog.Config != nil:
			p.errorAt(start, "duplicate config block")
		}
		if prog.Config == nil {
			prog.Config = entries
		}
	case token.PROBE:
		prog.Probes = append(prog.Probes, p.parseProbe())
	case token.MACRO:
		prog.Macros = append(prog.Macros, p.parseMacro())
	case token.LET:
		prog.MapDecls = append(prog.MapDecls, p.parseMapDecl())
	default:
		p.unexpected()
	}
}

// parseCDecl keeps a preprocessor line, or a struct, union or enum
// definition through its closing brace and ';', as source text.
func (p *parser) parseCDecl() *ast.CDecl {
	start := p.span.Start
	if p.tok == token.CPREPROC {
		d := &ast.CDecl{At: ast.At{Sp: p.span}, Text: p.lit}
		p.next()
		return d
	}
	for p.tok != token.LBRACE && p.tok != token.EOF {
		p.next()
	}
	p.expect(token.LBRACE)
	for n := 1; n > 0; {
		switch p.tok {
		case token.EOF:
			p.unexpected("}")
		case token.LBRACE:
			n++
		case token.RBRACE:
			n--
		}
		p.next()
	}
	// GNU attributes, such as __attribute__((packed)), belong to it;
	// the scanner reads each as one token.
	for p.tok == token.IDENT && strings.HasPrefix(p.lit, "__attribute__") {
		p.next()
	}
	p.got(token.SEMI)
	at := p.from(start)
	return &ast.CDecl{At: at, Text: string(p.file.Src[at.Sp.Start:at.Sp.End])}
}

// parseConfig parses `config = { key = value; ... }`.
func (p *parser) parseConfig() []*ast.ConfigEntry {
	p.expect(token.CONFIG)
	p.expect(token.ASSIGN)
	p.expect(token.LBRACE)
	var entries []*ast.ConfigEntry
	for p.tok != token.RBRACE {
		start := p.span.Start
		if p.tok != token.IDENT {
			p.unexpected("identifier", "}")
		}
		key := p.lit
		p.next()
		p.expect(token.ASSIGN)
		val := p.parseExpr()
		entries = append(entries, &ast.ConfigEntry{At: p.from(start), Key: key, Value: val})
		if !p.got(token.SEMI) && p.tok != token.RBRACE {
			p.unexpected(";", "}")
		}
	}
	p.next()
	return entries
}

// parseProbe parses attach points, an optional predicate and a block.
func (p *parser) parseProbe() *ast.Probe {
	start := p.span.Start
	pr := &ast.Probe{}
	for {
		pr.Attach = append(pr.Attach, &ast.AttachPoint{At: ast.At{Sp: p.span}, Text: p.lit})
		p.next()
		if !p.got(token.COMMA) {
			break
		}
		if p.tok != token.PROBE {
			p.unexpected("attach point")
		}
	}
	if p.tok == token.DIV {
		p.next()
		p.inPred = true
		pr.Pred = p.parseExpr()
		p.inPred = false
		p.expect(token.DIV, "end predicate")
	}
	pr.Body = p.parseBlock()
	pr.At = p.from(start)
	return pr
}

// ---------------------------------------------------------------------------
// Statements

func (p *parser) parseBlock() *ast.Block {
	p.enter()
	defer p.leave()
	start := p.expect(token.LBRACE, "{").Start
	b := &ast.Block{}
	for p.tok != token.RBRACE && p.tok != token.EOF {
		p.recovering(func() {
			b.Stmts = append(b.Stmts, p.parseStmt())
		}, p.syncStmt)
	}
	p.expect(token.RBRACE, "}")
	b.At = p.from(start)
	return b
}

// syncStmt skips to the end of the broken statement: past the next ';', or
// up to the '}' that closes the block.
func (p *parser) syncStmt() {
	for n := 0; p.tok != token.EOF; p.next() {
		switch p.tok {
		case token.LBRACE:
			n++
		case token.RBRACE:
			if n == 0 {
				return
			}
			n--
		case token.SEMI:
			if n == 0 {
				p.next()
				return
			}
		}
	}
}

// parseStmt parses one statement with its terminator. A ';' ends a simple
// statement, and may be left out before '}'; statements that end in a
// block need none but may have one.
func (p *parser) parseStmt() ast.Stmt {
	var s ast.Stmt
	switch p.tok {
	case token.LBRACE:
		s = p.parseBlock()
	case token.IF:
		s = p.parseIf()
	case token.WHILE:
		start := p.span.Start
		p.next()
		cond := p.parseCond()
		body := p.parseBlock()
		s = &ast.WhileStmt{At: p.from(start), Cond: cond, Body: body}
	case token.UNROLL:
		start := p.span.Start
		p.next()
		n := p.parseCond()
		body := p.parseBlock()
		s = &ast.UnrollStmt{At: p.from(start), Count: n, Body: body}
	case token.FOR:
		s = p.parseFor()
	case token.SEMI:
		p.unexpected("}")
	default:
		s = p.parseSimpleStmt()
		if !p.got(token.SEMI) && p.tok != token.RBRACE && p.tok != token.EOF {
			p.unexpected("}")
		}
		return s
	}
	p.got(token.SEMI)
	return s
}

func (p *parser) parseSimpleStmt() ast.Stmt {
	start := p.span.Start
	switch p.tok {
	case token.BREAK, token.CONTINUE:
		k := p.tok
		p.next()
		return &ast.JumpStmt{At: p.from(start), Tok: k}
	case token.RETURN:
		p.next()
		s := &ast.JumpStmt{Tok: token.RETURN}
		if p.tok != token.SEMI && p.tok != token.RBRACE && p.tok != token.EOF {
			s.Value = p.parseExpr()
		}
		s.At = p.from(start)
		return s
	case token.LET:
		return p.parseLet()
	case token.IDENT:
		if p.lit == "_" && p.peek() == token.ASSIGN {
			p.next()
			p.next()
			x := p.parseExpr()
			return &ast.ExprStmt{At: p.from(start), X: x, Discard: true}
		}
	}
	x := p.parseExpr()
	switch x.(type) {
	case *ast.Map, *ast.Var:
		if p.tok == token.ASSIGN || isCompound(p.tok) {
			op := p.tok
			p.next()
			rhs := p.parseExpr()
			return &ast.AssignStmt{At: p.from(start), LHS: x, Op: op, RHS: rhs}
		}
	}
	return &ast.ExprStmt{At: p.from(start), X: x}
}

func isCompound(k token.Kind) bool {
	_, ok := k.AssignOp()
	return ok
}

// parseLet parses `let $x`, with an optional `: type` and `= value`.
func (p *parser) parseLet() ast.Stmt {
	start := p.expect(token.LET).Start
	if p.tok != token.VAR {
		p.unexpected("variable")
	}
	s := &ast.LetStmt{Var: &ast.Var{At: ast.At{Sp: p.span}, Name: p.lit}}
	p.next()
	if p.got(token.COLON) {
		s.Type = p.parseType()
	}
	if p.got(token.ASSIGN) {
		s.Value = p.parseExpr()
	}
	s.At = p.from(start)
	return s
}

func (p *parser) parseIf() *ast.IfStmt {
	p.enter()
	defer p.leave()
	start := p.expect(token.IF).Start
	s := &ast.IfStmt{Cond: p.parseCond()}
	s.Then = p.parseBlock()
	if p.got(token.ELSE) {
		if p.tok == token.IF {
			s.Else = p.parseIf()
		} else {
			s.Else = p.parseBlock()
		}
	}
	s.At = p.from(start)
	return s
}

// parseCond parses the condition of if and while, or the count of unroll:
// an expression in parentheses or, as bpftrace v0.26 allows, a unary
// expression without them, which cannot swallow the '{' that follows.
func (p *parser) parseCond() ast.Expr {
	if !p.got(token.LPAREN) {
		return p.parseUnary()
	}
	x := p.parseExpr()
	p.expect(token.RPAREN, ")")
	return x
}

// parseFor parses `for ($kv : @map) { ... }` and `for ($i : start..end)
// { ... }`; the parentheses are optional.
func (p *parser) parseFor() ast.Stmt {
	start := p.expect(token.FOR).Start
	paren := p.got(token.LPAREN)
	if p.tok != token.VAR {
		p.unexpected("variable")
	}
	v := &ast.Var{At: ast.At{Sp: p.span}, Name: p.lit}
	p.next()
	p.expect(token.COLON)
	f := &ast.ForStmt{Var: v}
	if p.tok == token.MAP {
		f.Map = &ast.Map{At: ast.At{Sp: p.span}, Name: p.lit}
		p.next()
	} else {
		f.Start = p.parseUnary()
		p.expect(token.DOTDOT, "..")
		f.End = p.parseUnary()
	}
	if paren {
		p.expect(token.RPAREN, ")")
	}
	f.Body = p.parseBlock()
	f.At = p.from(start)
	return f
}

// ---------------------------------------------------------------------------
// Expressions

func (p *parser) parseExpr() ast.Expr {
	p.enter()
	defer p.leave()
	x := p.parseBinary(1)
	if p.tok != token.QUESTION {
		return x
	}
	p.next()
	var then ast.Expr
	if !p.got(token.COLON) {
		then = p.parseExpr()
		p.expect(token.COLON, ":")
	}
	els := p.parseExpr()
	return &ast.Ternary{At: ast.At{Sp: token.Span{Start: x.Span().Start, End: p.prevEnd}}, Cond: x, Then: then, Else: els}
}

// precedence returns the binding power of a binary operator, C's order
// from || (1) to * / % (10), or 0 for anything else.
func precedence(k token.Kind) int {
	switch k {
	case token.LOR:
		return 1
	case token.LAND:
		return 2
	case token.OR:
		return 3
	case token.XOR:
		return 4
	case token.AND:
		return 5
	case token.EQ, token.NE:
		return 6
	case token.LT, token.LE, token.GT, token.GE:
		return 7
	case token.SHL, token.SHR:
		return 8
	case token.ADD, token.SUB:
		return 9
	case token.MUL, token.DIV, token.MOD:
		return 10
	}
	return 0
}

// parseBinary parses operators of at least prec by precedence climbing;
// all of them are left-associative.
func (p *parser) parseBinary(prec int) ast.Expr {
	x := p.parseUnary()
	for {
		op := p.tok
		q := precedence(op)
		if q < prec || op == token.DIV && p.inPred && p.peek() == token.LBRACE {
			return x
		}
		p.next()
		y := p.parseBinary(q + 1)
		x = &ast.Binary{At: ast.At{Sp: token.Span{Start: x.Span().Start, End: p.prevEnd}}, Op: op, X: x, Y: y}
	}
}

func (p *parser) parseUnary() ast.Expr {
	p.enter()
	defer p.leave()
	start := p.span.Start
	switch op := p.tok; op {
	case token.NOT, token.BNOT, token.SUB, token.MUL, token.AND:
		p.next()
		x := p.parseUnary()
		return &ast.Unary{At: p.from(start), Op: op, X: x}
	case token.INC, token.DEC:
		p.next()
		x := p.parseUnary()
		p.checkIncDec(x)
		return &ast.IncDec{At: p.from(start), Op: op, X: x}
	}
	return p.parsePostfix(p.parsePrimary())
}

func (p *parser) checkIncDec(x ast.Expr) {
	switch x.(type) {
	case *ast.Var, *ast.Map:
	default:
		p.errorAt(x.Span(), "increment/decrement requires a variable or map")
	}
}

func (p *parser) parsePostfix(x ast.Expr) ast.Expr {
	start := x.Span().Start
	for {
		switch p.tok {
		case token.DOT, token.ARROW:
			arrow := p.tok == token.ARROW
			p.next()
			var name string
			switch {
			case p.tok == token.INT && !arrow && isDecimal(p.lit):
				name = p.lit
			case p.tok == token.IDENT || p.tok.IsKeyword():
				name = p.lit
			default:
				p.unexpected("identifier")
			}
			p.next()
			x = &ast.Field{At: p.from(start), X: x, Name: name, Arrow: arrow}
		case token.LBRACKET:
			p.next()
			i := p.parseExpr()
			p.expect(token.RBRACKET, "]")
			x = &ast.Index{At: p.from(start), X: x, I: i}
		case token.INC, token.DEC:
			p.checkIncDec(x)
			op := p.tok
			p.next()
			x = &ast.IncDec{At: p.from(start), Op: op, X: x, Post: true}
		default:
			return x
		}
	}
}

func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func (p *parser) parsePrimary() ast.Expr {
	start := p.span.Start
	at := ast.At{Sp: p.span}
	switch p.tok {
	case token.INT:
		v := p.intValue()
		p.next()
		return &ast.IntLit{At: at, Value: v}
	case token.STRING:
		s := &ast.StrLit{At: at, Value: p.lit}
		p.next()
		return s
	case token.TRUE, token.FALSE:
		b := &ast.BoolLit{At: at, Value: p.tok == token.TRUE}
		p.next()
		return b
	case token.VAR:
		v := &ast.Var{At: at, Name: p.lit}
		p.next()
		return v
	case token.POSITIONAL:
		return p.parsePositional()
	case token.MAP:
		m := &ast.Map{Name: p.lit}
		p.next()
		if p.got(token.LBRACKET) {
			m.Keys = p.parseList(token.RBRACKET, "]")
		}
		m.At = p.from(start)
		return m
	case token.IDENT, token.CONFIG: // config(), the builtin
		name := p.lit
		p.next()
		if name == "typeof" && p.tok == token.LPAREN {
			// A type as a value: a macro's argument.
			t := &ast.TypeExpr{Name: name}
			p.parseTypeof(t)
			p.next()
			t.At = p.from(start)
			return t
		}
		if p.got(token.LPAREN) {
			args := p.parseList(token.RPAREN, ")")
			return &ast.Call{At: p.from(start), Name: name, Args: args}
		}
		return &ast.Ident{At: at, Name: name}
	case token.SIZEOF:
		return p.parseSizeof()
	case token.OFFSETOF:
		return p.parseOffsetof()
	case token.LPAREN:
		return p.parseParen()
	case token.LBRACE:
		return p.parseBlockExpr()
	case token.IF:
		return p.parseIfExpr()
	}
	p.unexpected()
	return nil
}

// parseList parses comma-separated expressions up to and including end.
func (p *parser) parseList(end token.Kind, endText string) []ast.Expr {
	var list []ast.Expr
	if p.got(end) {
		return list
	}
	for {
		list = append(list, p.parseExpr())
		if p.got(end) {
			return list
		}
		if !p.got(token.COMMA) {
			p.unexpected(endText, `","`)
		}
	}
}

func (p *parser) parsePositional() ast.Expr {
	pos := &ast.Positional{At: ast.At{Sp: p.span}}
	if p.lit == "$#" {
		pos.Count = true
	} else {
		n, err := strconv.Atoi(p.lit[1:])
		if err != nil || n < 1 {
			p.errorAt(p.span, "param %s is out of integer range [1, %d]", p.lit, int64(1<<63-1))
		}
		pos.N = n
	}
	p.next()
	return pos
}

// parseParen parses what starts with '(': a cast, a tuple or a grouping.
func (p *parser) parseParen() ast.Expr {
	start := p.expect(token.LPAREN).Start
	if p.tok == token.IDENT && p.peek() == token.ASSIGN {
		return p.parseRecord(start)
	}
	if x := p.tryCast(start); x != nil {
		return x
	}
	x := p.parseExpr()
	if p.got(token.RPAREN) {
		return x
	}
	if p.tok != token.COMMA {
		p.unexpected(")", `","`)
	}
	p.next()
	elems := append([]ast.Expr{x}, p.parseList(token.RPAREN, ")")...)
	return &ast.Tuple{At: p.from(start), Elems: elems}
}

// parseRecord parses the fields of a record, `name = expr, ...)`, after
// its '('.
func (p *parser) parseRecord(start token.Pos) ast.Expr {
	r := &ast.Tuple{Names: []string{}}
	for {
		if p.tok != token.IDENT {
			p.unexpected("field name")
		}
		r.Names = append(r.Names, p.lit)
		p.next()
		p.expect(token.ASSIGN, "=")
		r.Elems = append(r.Elems, p.parseExpr())
		if p.got(token.RPAREN) {
			break
		}
		if !p.got(token.COMMA) {
			p.unexpected(")", `","`)
		}
	}
	r.At = p.from(start)
	return r
}

// tryCast parses `type) expr` after a '(' if the tokens look like a cast,
// as bpftrace decides it: a name that is not a builtin, or struct, union or
// enum and a name, with '*' or [N] after it, then ')' and something that
// can start an expression. Otherwise it consumes nothing and returns nil.
func (p *parser) tryCast(start token.Pos) ast.Expr {
	var typ *ast.TypeExpr
	if !p.maybeType() || !p.attempt(func() bool {
		typ = p.parseType()
		return p.got(token.RPAREN) && startsExpr(p.tok)
	}) {
		return nil
	}
	x := p.parseUnary()
	return &ast.Cast{At: p.from(start), Type: typ, X: x}
}

// maybeType reports whether the current token can begin a type.
func (p *parser) maybeType() bool {
	switch p.tok {
	case token.STRUCT, token.UNION, token.ENUM:
		return true
	case token.IDENT:
		return !builtin.Reserved(p.lit)
	}
	return false
}

func startsExpr(k token.Kind) bool {
	switch k {
	case token.INT, token.STRING, token.VAR, token.POSITIONAL, token.MAP,
		token.IDENT, token.LPAREN, token.SUB, token.NOT, token.BNOT, token.MUL,
		token.AND, token.TRUE, token.FALSE, token.SIZEOF, token.OFFSETOF:
		return true
	}
	return false
}

// parseType parses a type such as uint8, struct task_struct *, or
// int64[4].
func (p *parser) parseType() *ast.TypeExpr {
	t := &ast.TypeExpr{}
	start := p.span.Start
	switch p.tok {
	case token.STRUCT, token.UNION, token.ENUM:
		kw := p.lit
		p.next()
		if p.tok != token.IDENT {
			p.unexpected("identifier")
		}
		t.Name = kw + " " + p.lit
	case token.IDENT:
		t.Name = p.lit
		if p.lit == "typeof" && p.peek() == token.LPAREN {
			p.next()
			p.parseTypeof(t)
		}
	default:
		p.unexpected("identifier")
	}
	p.next()
	for p.got(token.MUL) {
		t.Ptr++
	}
	if p.got(token.LBRACKET) {
		if p.got(token.RBRACKET) {
			t.Unsized = true
			t.At = p.from(start)
			return t
		}
		if p.tok != token.INT {
			p.unexpected("integer")
		}
		n, err := strconv.Atoi(p.lit)
		if err != nil || n <= 0 {
			p.errorAt(p.span, "invalid array length: %s", p.lit)
		}
		t.Len = n
		p.next()
		p.expect(token.RBRACKET, "]")
	}
	t.At = p.from(start)
	return t
}

// parseTypeof parses the parenthesised operand of typeof, a type or an
// expression, into t, and leaves the ')' as the current token.
func (p *parser) parseTypeof(t *ast.TypeExpr) {
	p.expect(token.LPAREN)
	if p.typeFollows() {
		t.OfType = p.parseType()
	} else {
		t.Of = p.parseExpr()
	}
	if p.tok != token.RPAREN {
		p.unexpected(")")
	}
}

// typeFollows reports whether the tokens from here read as a type closed
// by ')' or ',': struct/union/enum, a known type name, or any name with
// '*' or [N] after it. Otherwise sizeof and offsetof take an expression.
func (p *parser) typeFollows() bool {
	if !p.maybeType() {
		return false
	}
	s := p.save()
	defer p.restore(s)
	known := p.tok != token.IDENT || typeNames[p.lit] || p.lit == "typeof"
	return p.attempt(func() bool {
		t := p.parseType()
		return (known || t.Ptr > 0 || t.Len > 0) && (p.tok == token.RPAREN || p.tok == token.COMMA)
	})
}

// typeNames are the builtin types of bpftrace.
var typeNames = map[string]bool{
	"bool": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"string": true, "inet": true, "buffer": true, "void": true,
	"usym": true, "ksym": true, "timestamp": true, "macaddr": true,
}

func (p *parser) parseSizeof() ast.Expr {
	start := p.expect(token.SIZEOF).Start
	p.expect(token.LPAREN)
	s := &ast.Sizeof{}
	if p.typeFollows() {
		s.Type = p.parseType()
	} else {
		s.X = p.parseExpr()
	}
	p.expect(token.RPAREN, ")")
	s.At = p.from(start)
	return s
}

// parseOffsetof parses offsetof(struct T, a.b) or offsetof(expr, a.b).
func (p *parser) parseOffsetof() ast.Expr {
	start := p.expect(token.OFFSETOF).Start
	p.expect(token.LPAREN)
	o := &ast.Offsetof{}
	if p.typeFollows() {
		o.Type = p.parseType()
	} else {
		o.X = p.parseExpr()
	}
	p.expect(token.COMMA, `","`)
	for {
		if p.tok != token.IDENT {
			p.unexpected("identifier")
		}
		o.Field = append(o.Field, p.lit)
		p.next()
		if !p.got(token.DOT) {
			break
		}
	}
	p.expect(token.RPAREN, ")")
	o.At = p.from(start)
	return o
}

// intValue converts the current INT token as bpftrace does, reporting a
// literal that is malformed or out of range.
func (p *parser) intValue() uint64 {
	v, err := token.ParseInt(p.lit)
	if err != nil {
		p.errorAt(p.span, "%v", err)
	}
	return v
}

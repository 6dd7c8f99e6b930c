package scanner

import (
	"bytes"
	"strings"

	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// Scanner reads the tokens of one file. Its zero value is not usable; call
// Init first.
type Scanner struct {
	file *token.File
	src  []byte
	errs *diag.List

	off   int        // next byte to read
	depth int        // brace nesting
	start bool       // at depth 0, the next token may begin a probe
	prev  token.Kind // the kind of the last token returned
	decl  bool       // in a top-level map declaration or import
}

// Init prepares s to scan f from the beginning, reporting problems to errs.
// A "#!" line at the very start is skipped as a comment.
func (s *Scanner) Init(f *token.File, errs *diag.List) {
	*s = Scanner{file: f, src: f.Src, errs: errs, start: true}
	if bytes.HasPrefix(s.src, []byte("#!")) {
		s.skipLine()
	}
}

// Scan returns the next token, its literal text and its span. For STRING
// the literal is the value with escapes resolved; for the other kinds it
// is the source text. At the end it returns EOF with an empty span at the
// end of the source.
func (s *Scanner) Scan() (token.Kind, string, token.Span) {
	kind, lit, sp := s.scan()
	s.prev = kind
	return kind, lit, sp
}

func (s *Scanner) scan() (token.Kind, string, token.Span) {
	s.skipSpace()
	begin := s.off
	if s.off >= len(s.src) {
		return token.EOF, "", s.span(begin)
	}
	c := s.src[s.off]

	if s.depth == 0 && s.start {
		switch {
		case c == '#':
			s.skipLine()
			text := strings.TrimRight(string(s.src[begin:s.off]), " \t\r\n")
			return token.CPREPROC, text, token.Span{Start: token.Pos(begin), End: token.Pos(begin + len(text))}
		case isLetter(c):
			word := s.peekWord()
			switch {
			case (word == "struct" || word == "union" || word == "enum") && s.looksLikeCDef(len(word)):
				s.start = false
				return s.scanNormal(begin, c)
			case word == "__attribute__" && (s.prev == token.RBRACE || s.prev == token.IDENT):
				// __attribute__((packed)) after a C definition's body,
				// as one token, so that a probe may follow.
				return s.scanAttribute(begin)
			case word == "config" && s.byteAfterSpace(s.off+len(word)) == '=':
				s.start = false
				return s.scanNormal(begin, c)
			case word == "macro" && isLetter(s.byteAfterSpace(s.off+len(word))):
				// A macro definition, `macro name(args) { ... }`.
				s.start = false
				return s.scanNormal(begin, c)
			case word == "import" && s.byteAfterSpace(s.off+len(word)) == '"':
				// `import "file";`, which the preprocessor reads: its
				// semicolon ends it.
				s.start, s.decl = false, true
				return s.scanNormal(begin, c)
			case word == "let" && s.byteAfterSpace(s.off+len(word)) == '@':
				// A map declaration, `let @a = hash(10);`: its
				// closing parenthesis ends it.
				s.start, s.decl = false, true
				return s.scanNormal(begin, c)
			}
			return s.scanProbe(begin)
		case !strings.ContainsRune("{};,()/", rune(c)):
			return s.scanProbe(begin)
		}
	}
	return s.scanNormal(begin, c)
}

func (s *Scanner) span(begin int) token.Span {
	return token.Span{Start: token.Pos(begin), End: token.Pos(s.off)}
}

func (s *Scanner) errorf(begin, end int, format string, args ...any) {
	s.errs.Add(token.Span{Start: token.Pos(begin), End: token.Pos(end)}, format, args...)
}

// skipSpace skips white space and comments.
func (s *Scanner) skipSpace() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			s.off++
		case c == '/' && s.peek(1) == '/':
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.off++
			}
		case c == '/' && s.peek(1) == '*':
			end := bytes.Index(s.src[s.off+2:], []byte("*/"))
			if end < 0 {
				s.errorf(s.off, len(s.src), "end of file during comment")
				s.off = len(s.src)
				return
			}
			s.off += 2 + end + 2
		default:
			return
		}
	}
}

// skipLine moves past the end of the current line, and of the lines a
// trailing backslash continues.
func (s *Scanner) skipLine() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		s.off++
		if c == '\\' && s.peek(0) == '\n' {
			s.off++
		} else if c == '\n' {
			return
		}
	}
}

func (s *Scanner) peek(n int) byte {
	if s.off+n < len(s.src) {
		return s.src[s.off+n]
	}
	return 0
}

func (s *Scanner) peekWord() string {
	end := s.off
	for end < len(s.src) && isIdent(s.src[end]) {
		end++
	}
	return string(s.src[s.off:end])
}

// byteAfterSpace returns the first byte at or after off that is not white
// space, or 0 at the end.
func (s *Scanner) byteAfterSpace(off int) byte {
	for off < len(s.src) && isSpace(s.src[off]) {
		off++
	}
	if off < len(s.src) {
		return s.src[off]
	}
	return 0
}

// scanAttribute reads `__attribute__ ((...))` through its last ')' as
// one IDENT, with the comments inside.
func (s *Scanner) scanAttribute(begin int) (token.Kind, string, token.Span) {
	s.off += len("__attribute__")
	depth := 0
	for {
		s.skipSpace()
		if s.off >= len(s.src) {
			s.errorf(begin, s.off, "unterminated __attribute__")
			break
		}
		switch s.src[s.off] {
		case '(':
			depth++
		case ')':
			depth--
		default:
			if depth == 0 {
				s.errorf(begin, s.off, "__attribute__ needs a parenthesised list")
				return token.IDENT, string(s.src[begin:s.off]), s.span(begin)
			}
		}
		s.off++
		if depth == 0 {
			break
		}
	}
	return token.IDENT, string(s.src[begin:s.off]), s.span(begin)
}

// looksLikeCDef reports whether the struct, union or enum keyword of length
// n at the current offset opens a C definition, "struct X {", rather than
// an attach point. Names and __attribute__((...)) may come before the brace.
func (s *Scanner) looksLikeCDef(n int) bool {
	for off := s.off + n; off < len(s.src); off++ {
		c := s.src[off]
		switch {
		case c == '{':
			return true
		case isIdent(c) || isSpace(c) || c == '(' || c == ')':
		default:
			return false
		}
	}
	return false
}

// scanProbe reads an attach point: everything up to white space, '{' or
// ','. A '/' ends it too when no ':' came before, as in "BEGIN/pid/";
// after a ':' it is part of a path. Quoted parts may hold any of these.
func (s *Scanner) scanProbe(begin int) (token.Kind, string, token.Span) {
	colon := false
	for s.off < len(s.src) {
		c := s.src[s.off]
		if isSpace(c) || c == '{' || c == ',' || c == '/' && !colon {
			break
		}
		if c == ':' {
			colon = true
		}
		s.off++
		if c == '"' {
			for s.off < len(s.src) && s.src[s.off] != '"' && s.src[s.off] != '\n' {
				if s.src[s.off] == '\\' {
					s.off++
				}
				s.off++
			}
			if s.off >= len(s.src) || s.src[s.off] != '"' {
				s.off = min(s.off, len(s.src))
				s.errorf(begin, s.off, "unterminated string")
				break
			}
			s.off++
		}
	}
	s.start = false
	return token.PROBE, string(s.src[begin:s.off]), s.span(begin)
}

func (s *Scanner) scanNormal(begin int, c byte) (token.Kind, string, token.Span) {
	switch {
	case isLetter(c):
		for s.off < len(s.src) && isIdent(s.src[s.off]) {
			s.off++
		}
		lit := string(s.src[begin:s.off])
		if k, ok := token.Keywords[lit]; ok {
			return k, lit, s.span(begin)
		}
		return token.IDENT, lit, s.span(begin)
	case isDigit(c):
		s.scanNumber()
		return token.INT, string(s.src[begin:s.off]), s.span(begin)
	case c == '"':
		val := s.scanString()
		return token.STRING, val, s.span(begin)
	case c == '$':
		s.off++
		switch {
		case s.peek(0) == '#':
			s.off++
			return token.POSITIONAL, "$#", s.span(begin)
		case isDigit(s.peek(0)):
			for s.off < len(s.src) && isDigit(s.src[s.off]) {
				s.off++
			}
			return token.POSITIONAL, string(s.src[begin:s.off]), s.span(begin)
		case isLetter(s.peek(0)):
			for s.off < len(s.src) && isIdent(s.src[s.off]) {
				s.off++
			}
			return token.VAR, string(s.src[begin:s.off]), s.span(begin)
		}
		s.errorf(begin, s.off, "invalid character '$'")
		return token.ILLEGAL, "$", s.span(begin)
	case c == '@':
		s.off++
		for s.off < len(s.src) && isIdent(s.src[s.off]) {
			s.off++
		}
		return token.MAP, string(s.src[begin:s.off]), s.span(begin)
	}
	kind := s.scanOperator(c)
	switch kind {
	case token.ILLEGAL:
		s.off = begin + 1
		s.errorf(begin, s.off, "invalid character '%s'", s.src[begin:s.off])
	case token.LBRACE:
		s.depth++
	case token.RBRACE:
		if s.depth > 0 {
			s.depth--
		}
		s.start = s.depth == 0
	case token.RPAREN, token.SEMI:
		if s.decl && s.depth == 0 {
			s.start, s.decl = true, false
		}
	case token.COMMA:
		// Attach points may be listed over several lines.
		s.start = s.depth == 0 && s.prev == token.PROBE
	}
	return kind, string(s.src[begin:s.off]), s.span(begin)
}

// ops lists the operators longest first, so that the first match wins.
var ops = []struct {
	text string
	kind token.Kind
}{
	{"<<=", token.SHL_ASSIGN}, {">>=", token.SHR_ASSIGN},
	{"->", token.ARROW}, {"..", token.DOTDOT}, {"++", token.INC}, {"--", token.DEC},
	{"&&", token.LAND}, {"||", token.LOR}, {"<<", token.SHL}, {">>", token.SHR},
	{"==", token.EQ}, {"!=", token.NE}, {"<=", token.LE}, {">=", token.GE},
	{"+=", token.ADD_ASSIGN}, {"-=", token.SUB_ASSIGN}, {"*=", token.MUL_ASSIGN},
	{"/=", token.DIV_ASSIGN}, {"%=", token.MOD_ASSIGN}, {"&=", token.AND_ASSIGN},
	{"|=", token.OR_ASSIGN}, {"^=", token.XOR_ASSIGN},
	{"(", token.LPAREN}, {")", token.RPAREN}, {"{", token.LBRACE}, {"}", token.RBRACE},
	{"[", token.LBRACKET}, {"]", token.RBRACKET}, {",", token.COMMA}, {";", token.SEMI},
	{":", token.COLON}, {".", token.DOT}, {"?", token.QUESTION}, {"=", token.ASSIGN},
	{"+", token.ADD}, {"-", token.SUB}, {"*", token.MUL}, {"/", token.DIV},
	{"%", token.MOD}, {"&", token.AND}, {"|", token.OR}, {"^", token.XOR},
	{"!", token.NOT}, {"~", token.BNOT}, {"<", token.LT}, {">", token.GT},
}

func (s *Scanner) scanOperator(c byte) token.Kind {
	rest := s.src[s.off:min(len(s.src), s.off+3)]
	for _, op := range ops {
		if op.text[0] == c && strings.HasPrefix(string(rest), op.text) {
			s.off += len(op.text)
			return op.kind
		}
	}
	return token.ILLEGAL
}

// scanNumber reads an integer literal as bpftrace does: hex (0x...),
// binary (0b...), or
// decimal with an optional exponent (1e6), '_' separators, and an optional
// suffix: u, l, ul, ull, ll, lu, llu in either case, or a time unit ns,
// us, ms, s, m, h, d. The
// value is checked by the parser.
func (s *Scanner) scanNumber() {
	begin := s.off
	if s.peek(0) == '0' && (s.peek(1) == 'x' || s.peek(1) == 'X') {
		s.off += 2
		s.digits(isHex)
		s.trailingUnderscore(begin)
	} else if s.peek(0) == '0' && (s.peek(1) == 'b' || s.peek(1) == 'B') {
		s.off += 2
		s.digits(func(c byte) bool { return c == '0' || c == '1' })
		s.trailingUnderscore(begin)
	} else {
		s.digits(isDigit)
		s.trailingUnderscore(begin)
		if c := s.peek(0); c == 'e' || c == 'E' {
			s.off++
			s.digits(isDigit)
			s.trailingUnderscore(begin)
		}
		s.suffix()
	}
	if isLetter(s.peek(0)) {
		bad := s.off
		for s.off < len(s.src) && isIdent(s.src[s.off]) {
			s.off++
		}
		s.errorf(bad, s.off, "invalid integer suffix '%s'", s.src[bad:s.off])
	}
}

func (s *Scanner) digits(ok func(byte) bool) {
	for s.off < len(s.src) && (ok(s.src[s.off]) || s.src[s.off] == '_') {
		s.off++
	}
}

func (s *Scanner) trailingUnderscore(begin int) {
	if s.off > begin && s.src[s.off-1] == '_' {
		s.errorf(s.off-1, s.off, "trailing underscore in integer literal")
	}
}

func (s *Scanner) suffix() {
	c, d := s.peek(0), s.peek(1)
	switch {
	case (c == 'n' || c == 'u' || c == 'm') && d == 's':
		s.off += 2
	case c == 's' || c == 'm' || c == 'h' || c == 'd':
		s.off++
	case c == 'u' || c == 'U':
		s.off++
		s.ells(2)
	case c == 'l' || c == 'L':
		s.ells(2)
		if c := s.peek(0); c == 'u' || c == 'U' {
			s.off++
		}
	}
}

// ells consumes up to n 'l' or 'L' bytes.
func (s *Scanner) ells(n int) {
	for ; n > 0 && (s.peek(0) == 'l' || s.peek(0) == 'L'); n-- {
		s.off++
	}
}

// scanString reads a double-quoted string and resolves its escapes: \n \t
// \r \" \\, \xNN and up to three octal digits. A string ends at the end of
// its line.
func (s *Scanner) scanString() string {
	begin := s.off
	s.off++ // opening quote
	var b strings.Builder
	for {
		if s.off >= len(s.src) || s.src[s.off] == '\n' {
			s.errorf(begin, s.off, "unterminated string")
			return b.String()
		}
		c := s.src[s.off]
		if c == '"' {
			s.off++
			return b.String()
		}
		if c != '\\' {
			b.WriteByte(c)
			s.off++
			continue
		}
		esc := s.off
		s.off++
		switch e := s.peek(0); e {
		case 'n':
			b.WriteByte('\n')
			s.off++
		case 't':
			b.WriteByte('\t')
			s.off++
		case 'r':
			b.WriteByte('\r')
			s.off++
		case '"', '\\':
			b.WriteByte(e)
			s.off++
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			for n := 0; n < 3 && s.peek(0) >= '0' && s.peek(0) <= '7'; n++ {
				v = v*8 + int(s.peek(0)-'0')
				s.off++
			}
			if v > 0xff {
				s.errorf(esc, s.off, "octal escape sequence out of range '%s'", s.src[esc:s.off])
			}
			b.WriteByte(byte(v))
		case 'x', 'X':
			s.off++
			v, n := 0, 0
			for ; n < 2 && isHex(s.peek(0)); n++ {
				v = v*16 + hexVal(s.peek(0))
				s.off++
			}
			if n == 0 {
				s.errorf(esc, s.off, "invalid hex escape sequence")
			}
			b.WriteByte(byte(v))
		case 0, '\n':
			// Reported as unterminated by the loop.
		default:
			s.off++
			s.errorf(esc, s.off, "invalid escape character '%s'", s.src[esc:s.off])
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isIdent(c byte) bool  { return isLetter(c) || isDigit(c) }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

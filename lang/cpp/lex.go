package cpp

import (
	"bytes"
	"strings"

	"gtrace/lang/diag"
	"gtrace/lang/token"
)

// tokKind is the kind of a preprocessing token.
type tokKind int

const (
	tIdent  tokKind = iota
	tNumber         // 42, 0x2a, 10UL
	tString         // "text" or 'c', never looked into
	tVar            // $x, $1, @map: names that never expand
	tPunct          // operators and anything else
)

// tok is a preprocessing token.
type tok struct {
	kind tokKind
	text string
	// span is where the token is in the original source. Tokens made by an
	// expansion take the span of the outermost invocation.
	span token.Span
	// space is set when white space came before the token.
	space bool
	// painted marks a macro name met inside its own expansion: it stays a
	// name for good, as C's "painted blue" tokens do.
	painted bool
}

// puncts lists the operators of more than one byte, longest first.
var puncts = []string{
	"<<=", ">>=", "...",
	"->", "++", "--", "&&", "||", "<<", ">>", "==", "!=", "<=", ">=",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", "..",
}

// lexLine reads the tokens of one logical line of src, from off up to the
// first newline that is neither escaped by a backslash nor inside a block
// comment. It returns the tokens and the offset of that newline, or
// len(src). Comments and backslash-newlines count as white space. A block
// comment that never ends is reported to errs, when it is not nil.
func lexLine(src []byte, off int, errs *diag.List) ([]tok, int) {
	var toks []tok
	space := false
	for off < len(src) {
		c := src[off]
		switch {
		case c == '\n':
			return toks, off
		case c == '\\' && off+1 < len(src) && src[off+1] == '\n':
			off += 2
			space = true
			continue
		case isSpace(c):
			off++
			space = true
			continue
		case c == '/' && off+1 < len(src) && src[off+1] == '/':
			for off < len(src) && src[off] != '\n' {
				if src[off] == '\\' && off+1 < len(src) {
					off++
				}
				off++
			}
			off = min(off, len(src))
			space = true
			continue
		case c == '/' && off+1 < len(src) && src[off+1] == '*':
			end := bytes.Index(src[off+2:], []byte("*/"))
			if end < 0 {
				if errs != nil {
					errs.Add(token.Span{Start: token.Pos(off), End: token.Pos(off + 2)}, "unterminated comment")
				}
				return toks, len(src)
			}
			off += 2 + end + 2
			space = true
			continue
		}
		begin := off
		kind := tPunct
		switch {
		case isLetter(c):
			kind = tIdent
			off = identEnd(src, off)
		case isDigit(c):
			kind = tNumber
			off = identEnd(src, off)
		case c == '"' || c == '\'':
			kind = tString
			off = quoteEnd(src, off)
		case (c == '$' || c == '@') && off+1 < len(src) && (isIdent(src[off+1]) || c == '$' && src[off+1] == '#'):
			kind = tVar
			off = identEnd(src, off+2)
		default:
			off++
			for _, p := range puncts {
				if strings.HasPrefix(string(src[begin:min(len(src), begin+3)]), p) {
					off = begin + len(p)
					break
				}
			}
		}
		toks = append(toks, tok{kind: kind, text: string(src[begin:off]),
			span: token.Span{Start: token.Pos(begin), End: token.Pos(off)}, space: space})
		space = false
	}
	return toks, off
}

// identEnd returns the end of the run of identifier bytes at off.
func identEnd(src []byte, off int) int {
	for off < len(src) && isIdent(src[off]) {
		off++
	}
	return off
}

// quoteEnd returns the end of the quoted literal at off: after its closing
// quote, or at the end of its line when it has none.
func quoteEnd(src []byte, off int) int {
	q := src[off]
	for off++; off < len(src) && src[off] != '\n'; off++ {
		switch src[off] {
		case '\\':
			off++ // an escaped newline continues the literal
		case q:
			return off + 1
		}
	}
	return min(off, len(src))
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isIdent(c byte) bool  { return isLetter(c) || isDigit(c) }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// opByte reports whether c is part of operators that could join another
// one next to it, such as '-' and '-' into "--".
func opByte(c byte) bool { return strings.IndexByte("+-*/%<>=!&|^.:~?#$@", c) >= 0 }

// joins reports whether text ending in a and text starting with b would
// scan as one token if written next to each other.
func joins(a, b byte) bool {
	return isIdent(a) && isIdent(b) || opByte(a) && opByte(b) ||
		(a == '$' || a == '@') && isIdent(b)
}

// spell writes toks as source text. It keeps a space where the source had
// one, and puts one where two tokens would otherwise run together.
func spell(toks []tok) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && (t.space || joins(toks[i-1].text[len(toks[i-1].text)-1], t.text[0])) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	return b.String()
}
